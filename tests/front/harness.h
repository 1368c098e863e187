/* SPDX-License-Identifier: MIT */
/* harness.h - netfront tests: a real pvnetd, and the test playing toolstack and backend */
#ifndef PVNET_TESTS_FRONT_HARNESS_H
#define PVNET_TESTS_FRONT_HARNESS_H

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <xenstore.h>

#include <pvnet/pvnet.h>

/*
 * pvnetd provides the domain (memory, grants, event channels, the store);
 * the test provides what pvnetd does not do yet: the toolstack (the device
 * directories, through the dom0 store socket with libxenstore) and the
 * backend's half of the XenbusState machine (a thread answering the
 * frontend's states).  The data-path tests then play the backend's ring
 * side in the test thread itself, on the frontend's own ring pages.
 */

struct harness {
	char run_dir[PATH_MAX];
	pid_t pvnetd;
	struct xs_handle *dom0; /* the test thread's dom0 connection */
};

/* What the fake backend offers and how it behaves. */
struct fake_be_opts {
	bool no_rx_copy;	     /* omit feature-rx-copy */
	bool split;		     /* feature-split-event-channels = 1 */
	unsigned int max_queues;     /* multi-queue-max-queues, 0: key absent */
	bool no_initwait;	     /* never leave Initialising */
	bool no_connect;	     /* never answer Connected */
	unsigned int persistent_max; /* feature-persistent + persistent-max-grants, 0: absent */
	bool mcast;		     /* feature-multicast-control = 1 */
	bool no_sg;		     /* feature-sg = 0 (GSO still offered) */
	bool close_on_connect;	     /* answer the frontend's Connected with Closing */
};

struct fake_be {
	struct harness *h;
	struct fake_be_opts opts;
	uint16_t domid;
	uint32_t devid;
	char fe[128], be[128], stop_path[128];
	pthread_t thread;
	struct xs_handle *xs; /* the thread's own dom0 connection */
	atomic_bool stop;
	atomic_int connects; /* times it answered Connected */
	atomic_int closings; /* times it saw the frontend Closing */
};

int h_start(struct harness *h, const char *pvnetd_exe);
/* The same with pvnetd --tx-mode @tx_mode ("map" or "copy"; NULL: pvnetd's default). */
int h_start_mode(struct harness *h, const char *pvnetd_exe, const char *tx_mode);
int h_stop(struct harness *h);

struct CMUnitTest;
/*
 * Run @tests as one cmocka group with a pvnetd (argv[1]) that @h starts
 * before them and stops after them; 2 with a usage line when argv[1] is
 * missing.
 */
int h_run_group(struct harness *h, int argc, char **argv, const struct CMUnitTest *tests, size_t n);

/* Toolstack: write both device directories with libxl's keys and permissions. */
void fb_toolstack(struct fake_be *fb, struct harness *h, uint16_t domid, uint32_t devid,
		  const struct fake_be_opts *opts);
void fb_start(struct fake_be *fb);
void fb_stop(struct fake_be *fb);
void fb_set_state(struct fake_be *fb, int state);

char *h_read(struct harness *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int h_read_int(struct harness *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
bool h_exists(struct harness *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The page behind one of the domain's grants, as a backend mapping it would see it. */
void *h_grant_page(struct pvnet_domain *dom, uint32_t ref, bool *readonly);
/* Is the queue's fd readable now (1), or not (0)? */
int h_queue_readable(struct pvnet_vif *vif, unsigned int queue);

#endif /* PVNET_TESTS_FRONT_HARNESS_H */
