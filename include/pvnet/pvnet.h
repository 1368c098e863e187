/* SPDX-License-Identifier: MIT */
/* pvnet.h - libpvnet: be a Xen frontend domain of a pvnetd backend */
#ifndef PVNET_PVNET_H
#define PVNET_PVNET_H

/*
 * libpvnet makes the calling process a guest domain of pvnetd, the way a
 * Xen PV guest is a domain of the hypervisor and its driver domain:
 *
 *   process                         pvnetd (domain 0)
 *   ┌──────────────────────┐        ┌───────────────────────────────┐
 *   │ guest memory (memfd) │──fd───▶│ hv: maps it, grants checked   │
 *   │ grant table (mapped) │◀──fd───│ hv: owns it, guest writes it  │
 *   │ event channels       │◀─fds──▶│ hv: socketpairs per channel   │
 *   │ xenstore client      │─sock──▶│ store: DIR/xenstore-domN.sock │
 *   └──────────────────────┘        └───────────────────────────────┘
 *
 * The domain lives as long as the pvnet_domain object: closing it (or the
 * process dying) makes pvnetd destroy the domain and release everything it
 * held.  Grant references and event-channel ports are Xen's: a backend
 * sees exactly what it would see on a Xen host.
 *
 * On top of the domain, the second half of this header gives it network
 * interfaces (netfront: vifs, queues, burst send and receive, zero-copy
 * buffers); docs/netfront.md describes the protocol side.
 *
 * All calls return 0 or a negative errno unless documented otherwise.
 * Objects are not thread safe unless documented otherwise.  A domain
 * (granting, allocating and closing event channels) and the control calls
 * of its vifs are one object: one thread at a time (data calls: see the
 * vif section below).
 *
 * Every request to pvnetd waits for its answer a bounded time (5 s, or a
 * vif's timeout_ms): a pvnetd that does not answer makes it fail with
 * -ETIMEDOUT, and every later request of the same domain with -EPIPE at
 * once, since the connection is out of step; destroying the domain still
 * works and releases it in pvnetd.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <xen/io/xenbus.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Size of a guest page, as on x86 Xen. */
#define PVNET_PAGE_SIZE 4096u

/* Where pvnetd puts its sockets unless told otherwise (pvnetd --run-dir). */
#define PVNET_RUN_DIR_DEFAULT "/run/pvnet"

struct pvnet_domain;

/**
 * pvnet_domain_create() - become a domain of the pvnetd serving @run_dir
 * @run_dir: pvnetd's run directory, or NULL for PVNET_RUN_DIR_DEFAULT
 * @pages: size of the domain's memory in 4 KiB pages (what it can grant),
 *	1 .. 262144 (1 GiB); a vif takes 2 + tx_buffers + rx_buffers pages a
 *	queue (pvnet_vif_create()), 514 for a queue of the defaults, and 2
 *	more with a control ring
 * @out: set to the new domain
 *
 * Creates a sealed memfd of @pages pages, hands it to pvnetd and maps the
 * grant table pvnetd returns.
 *
 * Return: 0, -ENOENT/-ECONNREFUSED if no pvnetd listens there, -EINVAL
 * (@pages out of range), or -errno
 */
int pvnet_domain_create(const char *run_dir, uint32_t pages, struct pvnet_domain **out);

/**
 * pvnet_domain_destroy() - leave pvnetd; it destroys the domain
 * @dom: the domain, or NULL
 */
void pvnet_domain_destroy(struct pvnet_domain *dom);

/**
 * pvnet_domain_id() - the domain id pvnetd gave this domain
 * @dom: the domain
 *
 * Return: the domid (1 or more)
 */
uint16_t pvnet_domain_id(const struct pvnet_domain *dom);

/**
 * pvnet_domain_set_name() - give the domain a name, as a toolstack does
 * @dom: the domain
 * @name: 1..128 characters of A-Z, a-z, 0-9, '.', '_', ':', '@' and '-'
 *
 * pvnetd writes it to /local/domain/<domid>/name (the guest may read it,
 * not change it) and `pvnet status` shows it.  Names are unique among the
 * domains of a pvnetd, as xl's; naming a domain again renames it.
 *
 * Return: 0; -EINVAL (not a valid name); -EEXIST (another domain has it);
 * or -errno
 */
int pvnet_domain_set_name(struct pvnet_domain *dom, const char *name);

/**
 * pvnet_domain_vif_error() - why the backend refused the last vif created on @dom
 * @dom: the domain
 *
 * When pvnet_vif_create() fails because the backend closed the vif while it
 * connected (-ENOTCONN), the reason the backend gave, as
 * pvnet_vif_backend_error() gives it for a vif that exists (e.g.
 * "starting worker 4: Resource temporarily unavailable").
 *
 * Return: NULL unless the last pvnet_vif_create() on @dom failed so, else the reason
 */
const char *pvnet_domain_vif_error(const struct pvnet_domain *dom);

/**
 * pvnet_domain_pages() - the number of pages of guest memory
 * @dom: the domain
 *
 * Return: the page count given to pvnet_domain_create()
 */
uint32_t pvnet_domain_pages(const struct pvnet_domain *dom);

/**
 * pvnet_domain_page() - the address of one page of guest memory
 * @dom: the domain
 * @frame: page number, below pvnet_domain_pages()
 *
 * Return: the page, or NULL if @frame is out of range
 */
void *pvnet_domain_page(struct pvnet_domain *dom, uint32_t frame);

/**
 * pvnet_domain_store_path() - the xenstore socket that acts as this domain
 * @dom: the domain
 *
 * Xen's clients find it through XENSTORED_PATH.
 *
 * Return: the socket path, valid while @dom lives
 */
const char *pvnet_domain_store_path(const struct pvnet_domain *dom);

/**
 * pvnet_grant_access() - grant @remote access to one page (gnttab_grant_foreign_access)
 * @dom: the domain
 * @remote: the domain allowed to map or copy the page (0 for pvnetd)
 * @frame: the page, below pvnet_domain_pages()
 * @readonly: grant read access only
 * @ref: set to the grant reference
 *
 * Vifs take their pages from the top of guest memory down; an application
 * granting pages of its own should use the lowest ones and leave the vifs
 * enough (2 + tx_buffers + rx_buffers per queue).
 *
 * Return: 0, -ENOSPC when the grant table is full, -EINVAL for a bad frame
 */
int pvnet_grant_access(struct pvnet_domain *dom, uint16_t remote, uint32_t frame, bool readonly,
		       uint32_t *ref);

/**
 * pvnet_grant_end() - revoke a grant and free its reference
 * @dom: the domain
 * @ref: a reference from pvnet_grant_access()
 *
 * As on Xen, this fails while the grantee has the page mapped or is
 * copying it; the page must not be reused until it succeeds.
 *
 * Return: 0, or -EBUSY while the grant is in use (the grant stays valid)
 */
int pvnet_grant_end(struct pvnet_domain *dom, uint32_t ref);

/**
 * struct pvnet_evtchn - one end of an event channel, held by a guest
 * @port: the port number (what goes into xenstore)
 * @fd: pollable: readable when an event is pending
 * @kick_fd: notifies the other end (private to the library)
 * @self_fd: makes @fd readable (private to the library)
 */
struct pvnet_evtchn {
	uint32_t port;
	int fd;
	int kick_fd;
	int self_fd;
};

/**
 * pvnet_evtchn_alloc() - allocate an unbound port for @remote to bind to
 * @dom: the domain
 * @remote: the domain that will bind it (0 for pvnetd)
 * @ch: filled in
 *
 * Return: 0, -ENOSPC (the domain has as many channels open as pvnetd gives
 * a guest: a channel counts until its last port closes, the backend's
 * included), -ENFILE (the channels pvnetd allows all guests are in use),
 * or -errno
 */
int pvnet_evtchn_alloc(struct pvnet_domain *dom, uint16_t remote, struct pvnet_evtchn *ch);

/**
 * pvnet_evtchn_notify() - send an event to the other end; thread safe
 * @ch: the channel
 *
 * Return: 0 or -errno
 */
int pvnet_evtchn_notify(const struct pvnet_evtchn *ch);

/**
 * pvnet_evtchn_pending() - consume a pending event without blocking; thread safe
 * @ch: the channel
 *
 * Return: 1 if an event was pending, 0 if none, or -errno
 */
int pvnet_evtchn_pending(const struct pvnet_evtchn *ch);

/**
 * pvnet_evtchn_close() - close the port; the other end goes back to unbound
 * @dom: the domain
 * @ch: the channel; its fds are closed
 *
 * Return: 0 or -errno
 */
int pvnet_evtchn_close(struct pvnet_domain *dom, struct pvnet_evtchn *ch);

/*
 * ---------------------------------------------------------------------------
 * Network interfaces (netfront)
 *
 * A vif is one Xen virtual network interface of this domain, backed by
 * pvnetd's netback.  pvnet_vif_create() asks pvnetd (the toolstack) for the
 * device, then negotiates with the backend through xenstore exactly as
 * Linux's xen-netfront does, and sets up 1..N queues:
 *
 *   queue i ┌──────────────────────────────────────────────────────────┐
 *           │ TX ring page (granted rw)   RX ring page (granted rw)    │
 *           │ TX buffer pages: one per TX request id, granted read-only│
 *           │ RX buffer pages: posted to the RX ring, granted writable │
 *           │ one event channel, or a TX and an RX one (split)         │
 *           └──────────────────────────────────────────────────────────┘
 *
 * Every page above is granted once, when the queue is set up, and stays
 * granted until the vif is destroyed: nothing is granted per packet.  The
 * copying calls (pvnet_send(), pvnet_recv()) copy between the
 * application's memory and these pages; the zero-copy calls
 * (pvnet_tx_alloc()/pvnet_tx_submit(), pvnet_rx_burst()/pvnet_rx_release())
 * hand the pages themselves to the application.
 *
 * Threads: control calls (create, destroy, reconnect, process) must not
 * run concurrently with anything else on the same vif.  Data calls on
 * different queues may run concurrently from different threads; one queue
 * is used by one thread at a time.
 *
 * Errors from the data calls: -ENOTCONN once the backend has disconnected
 * (see pvnet_vif_process()), -EIO once the vif is broken (the backend broke
 * the protocol; pvnet_vif_error() says how).  Both are final until
 * pvnet_vif_reconnect() or pvnet_vif_destroy().
 */

struct pvnet_vif;

/* Features a vif may negotiate (pvnet_vif_config.features, pvnet_vif_features()). */
#define PVNET_F_SG	     (1u << 0) /* feature-sg: frames over one page, up to 65535 bytes */
#define PVNET_F_GSO_TCPV4    (1u << 1) /* feature-gso-tcpv4: TCPv4 segmentation offload */
#define PVNET_F_GSO_TCPV6    (1u << 2) /* feature-gso-tcpv6 */
#define PVNET_F_CSUM	     (1u << 3) /* IPv4 checksum offload (off: feature-no-csum-offload=1) */
#define PVNET_F_IPV6_CSUM    (1u << 4) /* feature-ipv6-csum-offload */
#define PVNET_F_RX_NOTIFY    (1u << 5) /* feature-rx-notify: we kick the backend on new RX buffers */
#define PVNET_F_SPLIT_EVTCHN (1u << 6) /* separate TX and RX event channels per queue */
/*
 * feature-persistent (pvnet's extension, docs/persistent-grants.md): the
 * backend maps our buffer pages once and keeps them mapped, so no grant
 * operation is needed per packet.  Negotiated when the backend offers it
 * and tx_buffers + rx_buffers is within its persistent-max-grants.
 */
#define PVNET_F_PERSISTENT (1u << 7)
#define PVNET_F_ALL	   0xffu
/*
 * request-multicast-control (netif.h): the backend delivers only the
 * multicast groups subscribed with pvnet_mcast_add(), and broadcasts.  Not
 * in PVNET_F_ALL: a vif that asks for it receives no multicast until it
 * subscribes (IPv6 neighbour discovery included), so it is for those that
 * mean to.  Negotiated when the backend offers feature-multicast-control.
 */
#define PVNET_F_MCAST_FILTER (1u << 8)

/* Most queues a vif may have (Linux netback's default max_queues is at most 8; 16 leaves room). */
#define PVNET_MAX_QUEUES 16u
/* Ring slots per direction: a netif ring on a 4 KiB page has 256 entries. */
#define PVNET_RING_SIZE 256u
/* Most data slots (pages) of one frame: XEN_NETIF_NR_SLOTS_MIN. */
#define PVNET_MAX_FRAGS 18u
/* Largest frame: the 16-bit size field of a TX request (XEN_NETIF_MAX_TX_SIZE). */
#define PVNET_MAX_FRAME 65535u
/* Smallest frame: an Ethernet header. */
#define PVNET_MIN_FRAME 14u

/**
 * struct pvnet_vif_config - what pvnet_vif_create() asks for
 * @devid: the device number (the <devid> of device/vif/<devid>)
 * @queues: queues wanted, 1..PVNET_MAX_QUEUES; the vif gets
 *	min(@queues, the backend's multi-queue-max-queues, or 1 if absent)
 * @features: PVNET_F_* wanted; the vif gets those the backend offers too
 * @tx_buffers: TX pages per queue, PVNET_MAX_FRAGS..PVNET_RING_SIZE (one per
 *	TX request id, so at most this many slots are in flight)
 * @rx_buffers: RX pages per queue, PVNET_MAX_FRAGS + 1 .. 4096; more than
 *	PVNET_RING_SIZE lets the application hold zero-copy RX buffers while
 *	the ring stays full
 * @timeout_ms: bound on every wait for pvnetd or the backend, > 0
 * @prepared: the device directories already exist (written by a toolstack,
 *	as for a Xen guest at boot): do not send "vif-create" to pvnetd
 * @mac: the MAC address to ask pvnetd for; all zeroes lets pvnetd choose
 *	(Xen's OUI 00:16:3e and a random host part, as xl does); ignored when
 *	@prepared
 * @ctrl_ring: set up the control ring (feature-ctrl-ring) when the backend
 *	offers it, so that pvnet_vif_set_hash_*() can configure how the backend
 *	spreads received frames over the queues
 *
 * pvnet_vif_config_default() fills: devid 0, 1 queue, PVNET_F_ALL, 256 TX
 * and 256 RX buffers, 5000 ms, not prepared, MAC chosen by pvnetd, no
 * control ring.
 */
struct pvnet_vif_config {
	uint32_t devid;
	unsigned int queues;
	uint32_t features;
	unsigned int tx_buffers;
	unsigned int rx_buffers;
	int timeout_ms;
	bool prepared;
	uint8_t mac[6];
	bool ctrl_ring;
};

/**
 * pvnet_vif_config_default() - fill @cfg with the defaults
 * @cfg: the config
 */
void pvnet_vif_config_default(struct pvnet_vif_config *cfg);

/**
 * pvnet_vif_create() - create a vif and connect it to its backend
 * @dom: the domain (it must outlive the vif)
 * @cfg: the configuration
 * @out: set to the connected vif
 *
 * Sends {"op":"vif-create","devid":N} to pvnetd unless @cfg->prepared,
 * then runs netfront's connect sequence: waits for the backend's InitWait,
 * requires feature-rx-copy, sets up the queues, writes the ring references,
 * event channels and features in one transaction, switches to Connected
 * and waits for the backend's Connected.  The guest memory it needs
 * (2 + tx_buffers + rx_buffers pages per queue) comes from the domain.
 *
 * Return: 0; -EINVAL (bad config); -EEXIST (the domain has a vif of this
 * devid); -ENODEV (no device directory); -EOPNOTSUPP (backend without
 * feature-rx-copy); -ETIMEDOUT (backend did not answer within timeout_ms);
 * -ENOTCONN (backend closed); -ENOMEM (guest memory exhausted); -ENOSPC
 * (grant references exhausted, the domain has as many vifs as pvnetd
 * allows, 16, or its share of event channels in use; see
 * pvnet_evtchn_alloc()); -ENFILE (the event channels pvnetd allows all
 * guests are in use); or -errno
 */
int pvnet_vif_create(struct pvnet_domain *dom, const struct pvnet_vif_config *cfg,
		     struct pvnet_vif **out);

/**
 * pvnet_vif_destroy() - disconnect (Closing, Closed) and free the vif
 * @vif: the vif, or NULL
 *
 * Waits (bounded) for the backend to close, then ends every grant.  A page
 * whose grant the backend still has mapped is never reused (XSA-396): it
 * stays out of the domain's free pages, counted by
 * pvnet_domain_abandoned_pages().  Every struct pvnet_buf of the vif the
 * application still holds (taken, not yet submitted, freed or released)
 * is gone with it: neither use nor hand it back.
 */
void pvnet_vif_destroy(struct pvnet_vif *vif);

/**
 * pvnet_vif_reconnect() - tear the queues down and run the connect sequence again
 * @vif: the vif (connected, disconnected or broken)
 *
 * The queues are new: every struct pvnet_buf the application held is
 * invalid, as after pvnet_vif_destroy().  Should it fail, the vif is left
 * disconnected (data calls return -ENOTCONN; a broken vif's reason is
 * gone) and may be reconnected again.
 *
 * Return: as pvnet_vif_create()
 */
int pvnet_vif_reconnect(struct pvnet_vif *vif);

/**
 * pvnet_vif_control_fd() - fd that is readable when the vif's xenstore watches fire
 * @vif: the vif
 *
 * Return: the fd; call pvnet_vif_process() when it is readable
 */
int pvnet_vif_control_fd(const struct pvnet_vif *vif);

/**
 * pvnet_vif_process() - handle xenstore events: notice the backend closing
 * @vif: the vif
 *
 * Does not wait for events; when there is one, it costs a store round
 * trip or two (each bounded by timeout_ms).  When the backend has gone
 * Closing or Closed (or its directory has vanished while connected), the
 * vif answers Closed itself (as Linux netfront does) and every data call
 * returns -ENOTCONN until pvnet_vif_reconnect().
 *
 * Return: the vif's xenbus state, or -errno
 */
int pvnet_vif_process(struct pvnet_vif *vif);

/**
 * pvnet_vif_state() - this frontend's xenbus state
 * @vif: the vif
 *
 * Return: a value of enum xenbus_state (<xen/io/xenbus.h>)
 */
enum xenbus_state pvnet_vif_state(const struct pvnet_vif *vif);

/**
 * pvnet_vif_backend_state() - the backend's state as last read
 * @vif: the vif
 *
 * Return: a value of enum xenbus_state
 */
enum xenbus_state pvnet_vif_backend_state(const struct pvnet_vif *vif);

/**
 * pvnet_vif_carrier() - is the link up, as the backend last said?
 * @vif: the vif
 *
 * netif.h's link state: the backend's "carrier" key, watched and re-read
 * by pvnet_vif_process() (and once at connect).  pvnetd turns it off while
 * a queue of the vif is stalled (the guest left it without RX buffers for
 * its stall timeout) and on again once buffers are posted.  A backend
 * that does not write the key leaves the link up.
 *
 * Return: true while the vif is connected and the backend's carrier is on
 */
bool pvnet_vif_carrier(const struct pvnet_vif *vif);

/**
 * pvnet_vif_error() - why the vif is broken
 * @vif: the vif
 *
 * Return: NULL while the vif is healthy, else a sentence for people
 */
const char *pvnet_vif_error(const struct pvnet_vif *vif);

/**
 * pvnet_vif_backend_error() - why the backend closed the vif, in its words
 * @vif: the vif
 *
 * A backend that disables a vif writes why in its directory's "error" key
 * before it closes (pvnetd does, as Linux's netback writes its error node),
 * e.g. "tx: slot crosses its page (slot 6)".  The vif reads it when it
 * sees the backend close (pvnet_vif_process()); every byte that is not
 * printable ASCII reads as '?', and it is cut at 255 bytes.  It stays until
 * pvnet_vif_reconnect().
 *
 * Return: NULL unless the backend closed the vif and gave a reason, else the reason
 */
const char *pvnet_vif_backend_error(const struct pvnet_vif *vif);

/**
 * pvnet_vif_queues() - the number of queues negotiated
 * @vif: the vif
 *
 * Return: 1..PVNET_MAX_QUEUES
 */
unsigned int pvnet_vif_queues(const struct pvnet_vif *vif);

/**
 * pvnet_vif_features() - the features negotiated
 * @vif: the vif
 *
 * Return: PVNET_F_* bits both sides agreed on
 */
uint32_t pvnet_vif_features(const struct pvnet_vif *vif);

/**
 * pvnet_vif_mac() - the MAC address the toolstack gave the vif
 * @vif: the vif
 * @mac: receives 6 bytes
 */
void pvnet_vif_mac(const struct pvnet_vif *vif, uint8_t mac[6]);

/**
 * pvnet_vif_frontend_path() - the vif's frontend directory in xenstore
 * @vif: the vif
 *
 * Return: e.g. "/local/domain/1/device/vif/0", valid while @vif lives
 */
const char *pvnet_vif_frontend_path(const struct pvnet_vif *vif);

/**
 * pvnet_vif_backend_path() - the backend directory the frontend found
 * @vif: the vif
 *
 * Return: e.g. "/local/domain/0/backend/vif/1/0", valid while @vif lives
 */
const char *pvnet_vif_backend_path(const struct pvnet_vif *vif);

/* Per-packet flags (struct pvnet_pkt, struct pvnet_buf). */
#define PVNET_PKT_CSUM_BLANK	 (1u << 0) /* L4 checksum left to the receiver (partial) */
#define PVNET_PKT_DATA_VALIDATED (1u << 1) /* checksums known good */
#define PVNET_PKT_HASH		 (1u << 2) /* RX: hash and hash_type are valid */

/* GSO types: the values of XEN_NETIF_GSO_TYPE_*. */
#define PVNET_GSO_NONE	0u
#define PVNET_GSO_TCPV4 1u
#define PVNET_GSO_TCPV6 2u

/**
 * struct pvnet_pkt - one frame for the copying calls
 * @data: TX: the frame; RX: set to where the frame was copied in the buffer
 * @len: bytes, PVNET_MIN_FRAME..PVNET_MAX_FRAME
 * @flags: PVNET_PKT_*
 * @gso_type: PVNET_GSO_*; TX needs the matching feature negotiated
 * @gso_size: the MSS for @gso_type
 * @hash_type: RX with PVNET_PKT_HASH: the _XEN_NETIF_CTRL_HASH_TYPE_* bit number
 * @hash: RX with PVNET_PKT_HASH: the backend's hash of the flow
 */
struct pvnet_pkt {
	const void *data;
	uint32_t len;
	uint16_t flags;
	uint8_t gso_type;
	uint8_t hash_type;
	uint16_t gso_size;
	uint32_t hash;
};

/**
 * pvnet_send() - copy and queue a burst of frames on a TX queue
 * @vif: the vif
 * @queue: the queue, below pvnet_vif_queues()
 * @pkts: the frames
 * @n: how many
 *
 * Reaps completed requests first, then copies each frame into TX buffer
 * pages (one slot per 4 KiB; more than one needs PVNET_F_SG), adds a GSO
 * extra slot when asked for, pushes all of them with one producer update
 * and at most one notification.  Stops at the first frame that does not
 * fit in the ring or the free buffers (the queue is then "stopped" until
 * completions come back: poll pvnet_queue_fd()).
 *
 * Return: the number of frames queued (0 when the ring is full), or
 * -EINVAL for a bad first frame, -ENOTCONN, -EIO
 */
int pvnet_send(struct pvnet_vif *vif, unsigned int queue, const struct pvnet_pkt *pkts,
	       unsigned int n);

/**
 * pvnet_recv() - receive and copy a burst of frames from an RX queue
 * @vif: the vif
 * @queue: the queue
 * @pkts: filled with up to @n frames
 * @n: room in @pkts
 * @buf: where the frames are copied, one after the other
 * @buflen: size of @buf; PVNET_MAX_FRAME or more always makes progress
 *
 * Frames that the backend marked as errors are dropped and counted
 * (rx_errors).  The RX buffers are re-posted in batches.
 *
 * Return: the number of frames received (0: none waiting), -ENOBUFS if
 * the next frame does not fit in an empty @buf, -ENOTCONN, -EIO
 */
int pvnet_recv(struct pvnet_vif *vif, unsigned int queue, struct pvnet_pkt *pkts, unsigned int n,
	       void *buf, size_t buflen);

/**
 * pvnet_mcast_add() - subscribe to a multicast group (the backend's filter)
 * @vif: the vif
 * @queue: the TX queue to send the request on (a data call: the same
 *	threading rules as pvnet_send() on that queue)
 * @mac: the group's multicast MAC address (01:00:5e:... for IPv4,
 *	33:33:... for IPv6)
 *
 * Sends netif's "dummy" TX request with an XEN_NETIF_EXTRA_TYPE_MCAST_ADD
 * extra; the filter applies while the vif has PVNET_F_MCAST_FILTER, and
 * subscriptions made before it applies count too.  Subscriptions are
 * counted (two adds need two pvnet_mcast_del()s).  The backend answers
 * asynchronously; a refused one (its filter is full: 64 groups in Linux and
 * pvnet) is counted as mcast_refused in pvnet_queue_stats().
 *
 * Return: 1 when the request is on the ring, 0 when the ring or the TX ids
 * are full (as pvnet_send(): retry once completions come back), -EINVAL
 * for an address that is not multicast or is broadcast, -EOPNOTSUPP if the
 * backend does not offer feature-multicast-control, -ENOTCONN, -EIO
 */
int pvnet_mcast_add(struct pvnet_vif *vif, unsigned int queue, const uint8_t mac[6]);

/**
 * pvnet_mcast_del() - drop one subscription to a multicast group
 * @vif: the vif
 * @queue: as for pvnet_mcast_add()
 * @mac: the group's address
 *
 * Return: as pvnet_mcast_add()
 */
int pvnet_mcast_del(struct pvnet_vif *vif, unsigned int queue, const uint8_t mac[6]);

/**
 * struct pvnet_buf - a granted page handed to the application (zero copy)
 * @data: first byte of the (fragment's) data; TX: the application may move
 *	it within the page, RX: set by the library
 * @len: bytes at @data; data + len must stay within the page
 * @pkt_len: first buffer of an RX frame: the whole frame's length
 * @flags: first buffer of a frame: PVNET_PKT_*
 * @gso_type: first buffer of a frame: PVNET_GSO_*
 * @gso_size: first buffer of a frame: the MSS
 * @hash_type: first buffer of an RX frame with PVNET_PKT_HASH: as in
 *	struct pvnet_pkt
 * @next: the frame's next fragment, or NULL
 * @page: the granted page holding @data (4096 bytes); do not change (the
 *	library goes by its own record of it and sets it again on every hand-out)
 * @id: the library's name for the buffer; do not change (likewise: the
 *	library knows a buffer by its address)
 * @hash: first buffer of an RX frame with PVNET_PKT_HASH: the backend's
 *	hash of the flow
 *
 * A buffer belongs to the application between pvnet_tx_alloc() and
 * pvnet_tx_submit()/pvnet_tx_free(), and between pvnet_rx_burst() and
 * pvnet_rx_release(); at all other times to the library and the backend.
 */
struct pvnet_buf {
	void *data;
	uint32_t len;
	uint32_t pkt_len;
	uint16_t flags;
	uint8_t gso_type;
	uint8_t hash_type; /* in what was padding: no other field's offset moved */
	uint16_t gso_size;
	struct pvnet_buf *next;
	void *page;
	uint32_t id;
	uint32_t hash; /* likewise (and the size is unchanged where pointers are 64-bit) */
};

/**
 * pvnet_tx_alloc() - take free TX buffers
 * @vif: the vif
 * @queue: the queue
 * @bufs: receives up to @n buffers (data = page, len 0, next NULL)
 * @n: how many wanted
 *
 * Finding none free (with @n > 0) stops the queue as a full ring stops
 * pvnet_send(): the TX completion event is armed, so pvnet_queue_fd()
 * becomes readable (and pvnet_queue_wait() returns) when buffers come
 * back.  Taking fewer than @n arms nothing.
 *
 * Return: how many were taken (0 when none are free), or -errno
 */
int pvnet_tx_alloc(struct pvnet_vif *vif, unsigned int queue, struct pvnet_buf **bufs,
		   unsigned int n);

/**
 * pvnet_tx_submit() - queue frames built in TX buffers, without copying
 * @vif: the vif
 * @queue: the queue the buffers came from
 * @bufs: the first buffer of each frame (more fragments via ->next)
 * @n: how many frames
 *
 * Each frame's length is the sum of its fragments' len.  Frames not
 * queued (ring full) still belong to the application.  A malformed frame
 * (a NULL entry of @bufs is one) or one that needs what the backend did
 * not negotiate stops the call there: the frames before it are queued and
 * counted, it and those after it are not and still belong to the
 * application.
 *
 * Return: the number of frames queued, -EINVAL if the first one is
 * malformed, -EOPNOTSUPP if it needs what the backend did not negotiate
 * (several slots without feature-sg, a GSO type), -ENOTCONN, -EIO
 */
int pvnet_tx_submit(struct pvnet_vif *vif, unsigned int queue, struct pvnet_buf **bufs,
		    unsigned int n);

/**
 * pvnet_tx_free() - give unsent TX buffers back
 * @vif: the vif
 * @queue: the queue
 * @bufs: the buffers (each with its ->next chain)
 * @n: how many
 *
 * A buffer the application does not hold (given back already) is skipped;
 * a pointer that is none of the queue's buffers ends its chain there,
 * unread.
 */
void pvnet_tx_free(struct pvnet_vif *vif, unsigned int queue, struct pvnet_buf **bufs,
		   unsigned int n);

/**
 * pvnet_rx_burst() - receive frames as the granted buffers they landed in
 * @vif: the vif
 * @queue: the queue
 * @bufs: receives the first buffer of up to @n frames (more via ->next)
 * @n: room in @bufs
 *
 * The buffers stay granted to the backend, writable, while the application
 * holds them (the grants last for the queue's life; with PVNET_F_PERSISTENT
 * they stay mapped too): the backend could still write a frame the
 * application is reading.  Against a backend it does not trust, the
 * application copies a header out before it checks and uses it, as
 * pvnet_recv() copies the whole frame.
 *
 * Return: the number of frames, -ENOTCONN, -EIO
 */
int pvnet_rx_burst(struct pvnet_vif *vif, unsigned int queue, struct pvnet_buf **bufs,
		   unsigned int n);

/**
 * pvnet_rx_release() - give received frames' buffers back, to be re-posted
 * @vif: the vif
 * @queue: the queue
 * @bufs: first buffers of frames from pvnet_rx_burst()
 * @n: how many
 *
 * As pvnet_tx_free(): buffers not held are skipped, a foreign pointer ends
 * its chain.
 */
void pvnet_rx_release(struct pvnet_vif *vif, unsigned int queue, struct pvnet_buf **bufs,
		      unsigned int n);

/**
 * pvnet_queue_fd() - a pollable fd for one queue
 * @vif: the vif
 * @queue: the queue
 *
 * Readable when responses or frames may be waiting.  The data calls clear
 * it and re-arm the ring's event index only when they find nothing to do,
 * so a busy queue costs no system call per frame and an idle one never
 * misses a wakeup.  It also becomes readable, on every queue, when the vif
 * stops taking data (broken: -EIO; the backend closed: -ENOTCONN), so a
 * thread asleep on it wakes and its next data call says which.
 *
 * Return: the fd, or -EINVAL for a bad queue
 */
int pvnet_queue_fd(struct pvnet_vif *vif, unsigned int queue);

/**
 * pvnet_queue_wait() - adaptive wait: poll the rings briefly, then sleep on the queue's fd
 * @vif: the vif
 * @queue: the queue (its owner thread, as for the data calls)
 * @poll_us: look at the rings for up to this many microseconds first,
 *	yielding the CPU (sched_yield) between looks, so that a busy queue
 *	needs no event and more busy queues than cores still share them
 *	(the rings' events are disarmed meanwhile, so the backend does not
 *	notify a queue that is looking anyway, and armed again when the
 *	window ends); 0 goes straight to sleep
 * @timeout_ms: then wait for the queue's fd this long (-1: for ever)
 *
 * Call it when a data call found nothing to do (that call re-armed the
 * queue's events, see pvnet_queue_fd()).  The same adaptive waiting as
 * pvnetd's workers (docs/steering.md).
 *
 * Return: 1 when responses or frames may be waiting, 0 on timeout,
 * -EINVAL, -ENOTCONN, -EIO or -errno of poll()
 */
int pvnet_queue_wait(struct pvnet_vif *vif, unsigned int queue, unsigned int poll_us,
		     int timeout_ms);

/**
 * struct pvnet_stat - one named counter
 * @name: Linux-style counter name
 * @value: its value
 */
struct pvnet_stat {
	const char *name;
	uint64_t value;
};

/**
 * pvnet_queue_stats() - read a queue's counters
 * @vif: the vif
 * @queue: the queue
 * @stats: receives up to @n counters
 * @n: room in @stats
 *
 * Counters: tx_packets, tx_bytes, tx_errors (NETIF_RSP_ERROR or DROPPED
 * answers), tx_ring_full (sends stopped by a full ring or no buffers),
 * tx_notify, rx_packets, rx_bytes, rx_errors, rx_notify, rx_spurious (events
 * that woke a receive call which then found nothing), mcast_requests
 * (pvnet_mcast_add() and _del() requests answered), mcast_refused (of those,
 * refused by the backend).
 *
 * Return: the number of counters available (may exceed @n), or -EINVAL
 */
int pvnet_queue_stats(struct pvnet_vif *vif, unsigned int queue, struct pvnet_stat *stats,
		      unsigned int n);

/**
 * pvnet_domain_abandoned_pages() - pages never reused because a backend kept them mapped
 * @dom: the domain
 *
 * Return: the count (XSA-396: such pages stay out of circulation)
 */
uint32_t pvnet_domain_abandoned_pages(const struct pvnet_domain *dom);

#ifdef __cplusplus
}
#endif

/* Steering: the control ring (RX queue selection) and TX steering policies. */
#include <pvnet/steer.h>

#endif /* PVNET_PVNET_H */
