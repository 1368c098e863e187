/* SPDX-License-Identifier: MIT */
/* xen.h - include Xen's public protocol headers with the barriers ring.h expects */
#ifndef PVNET_COMMON_XEN_H
#define PVNET_COMMON_XEN_H

/*
 * Xen's headers are the protocol: pvnet includes them rather than retyping
 * them.  They expect the includer to provide <stdint.h> and the barrier
 * macros used by ring.h (xen_mb/xen_rmb/xen_wmb map onto mb/rmb/wmb).
 * Between processes sharing memory these are C11 fences: release before
 * publishing a producer index, acquire after reading one, and a full
 * (sequentially consistent) fence where a store must be visible before a
 * later load — the notify check of RING_PUSH_*_AND_CHECK_NOTIFY and
 * RING_FINAL_CHECK_FOR_*.  On x86 only the full fence costs an instruction.
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifndef mb
#if defined(__SANITIZE_THREAD__)
/*
 * ThreadSanitizer does not model fences (gcc refuses them with -Wtsan), so
 * under TSan each barrier is a sequentially consistent read-modify-write of
 * one shared word, which TSan sees and which orders at least as strongly.
 * Ring code that TSan checks across threads should still access indices
 * with __atomic loads and stores, as src/back does.
 */
extern _Atomic unsigned int pvnet_tsan_fence;
#define mb()  atomic_fetch_add_explicit(&pvnet_tsan_fence, 0, memory_order_seq_cst)
#define rmb() mb()
#define wmb() mb()
#else
#define mb()  atomic_thread_fence(memory_order_seq_cst)
#define rmb() atomic_thread_fence(memory_order_acquire)
#define wmb() atomic_thread_fence(memory_order_release)
#endif
#endif

#include <xen/xen.h>
#include <xen/event_channel.h>
#include <xen/grant_table.h>
#include <xen/io/netif.h>
#include <xen/io/ring.h>
#include <xen/io/xenbus.h>
#include <xen/io/xs_wire.h>

/**
 * xen_ring_push() - publish a producer index; did the other end ask for an event?
 * @prod: the shared ring's req_prod (frontend) or rsp_prod (backend)
 * @event: the other end's req_event or rsp_event on the shared ring
 * @pushed: the index we published last, kept in our own memory; updated
 * @idx: the index to publish (req_prod_pvt or rsp_prod_pvt)
 *
 * RING_PUSH_REQUESTS_AND_CHECK_NOTIFY and RING_PUSH_RESPONSES_AND_CHECK_NOTIFY
 * read the old producer back from the shared page, where the other end may
 * have written anything (and make it skip an event it asked for); here it
 * comes from @pushed.  The sequentially consistent store is the macros'
 * wmb() and store, and orders the load of @event after it as their mb().
 *
 * Return: whether to notify (false as well when there was nothing to publish)
 */
static inline bool xen_ring_push(RING_IDX *prod, RING_IDX *event, RING_IDX *pushed, RING_IDX idx)
{
	RING_IDX old = *pushed;

	if (idx == old)
		return false;
	__atomic_store_n(prod, idx, __ATOMIC_SEQ_CST);
	*pushed = idx;
	return (RING_IDX)(idx - __atomic_load_n(event, __ATOMIC_SEQ_CST)) < (RING_IDX)(idx - old);
}

#endif /* PVNET_COMMON_XEN_H */
