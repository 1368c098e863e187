// SPDX-License-Identifier: MIT
/* harness.c - netfront tests: start pvnetd, play toolstack and backend state machine */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "front/front.h"
#include "../common/group_run.h"
#include "harness.h"

/*
 * XENSTORED_PATH is set once, before any thread starts (setenv is not
 * thread safe); every libxenstore handle of the test is a dom0 handle.
 */

int h_start(struct harness *h, const char *pvnetd_exe)
{
	return h_start_mode(h, pvnetd_exe, NULL);
}

int h_start_mode(struct harness *h, const char *pvnetd_exe, const char *tx_mode)
{
	char logpath[PATH_MAX + 8], sock[PATH_MAX + 32];

	memset(h, 0, sizeof(*h));
	snprintf(h->run_dir, sizeof(h->run_dir), "/tmp/pvnet-test-front-XXXXXX");
	if (!mkdtemp(h->run_dir))
		return -errno;
	snprintf(logpath, sizeof(logpath), "%s.log", h->run_dir);
	h->pvnetd = fork();
	if (h->pvnetd < 0)
		return -errno;
	if (h->pvnetd == 0) {
		int fd = open(logpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		dup2(fd, 2);
		if (tx_mode)
			execl(pvnetd_exe, "pvnetd", "--run-dir", h->run_dir, "--log-level", "debug",
			      "--tx-mode", tx_mode, NULL);
		else
			execl(pvnetd_exe, "pvnetd", "--run-dir", h->run_dir, "--log-level", "debug",
			      NULL);
		_exit(127);
	}
	snprintf(sock, sizeof(sock), "%s/pvnetd.sock", h->run_dir);
	/* pvnetd starts in milliseconds; 5 s covers a loaded machine and sanitizers. */
	for (int i = 0; i < 500 && access(sock, F_OK); i++)
		usleep(10000);
	if (access(sock, F_OK))
		return -ETIMEDOUT;
	snprintf(sock, sizeof(sock), "%s/xenstore.sock", h->run_dir);
	setenv("XENSTORED_PATH", sock, 1);
	h->dom0 = xs_open(XS_OPEN_SOCKETONLY);
	return h->dom0 ? 0 : -errno;
}

/* The harness and pvnetd of h_run_group()'s group: cmocka's group set-up takes no argument. */
static struct harness *group_h;
static const char *group_exe;

static int group_setup(void **state)
{
	return h_start(group_h, group_exe);
}

static int group_teardown(void **state)
{
	return h_stop(group_h);
}

int h_run_group(struct harness *h, int argc, char **argv, const struct CMUnitTest *tests, size_t n)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s PVNETD\n", argv[0]);
		return 2;
	}
	group_h = h;
	group_exe = argv[1];
	return group_run(argv[0], tests, n, group_setup, group_teardown);
}

int h_stop(struct harness *h)
{
	char logpath[PATH_MAX + 8];
	int st = 0;

	if (h->dom0)
		xs_close(h->dom0);
	kill(h->pvnetd, SIGTERM);
	waitpid(h->pvnetd, &st, 0);
	snprintf(logpath, sizeof(logpath), "%s.log", h->run_dir);
	rmdir(h->run_dir);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "pvnetd exited badly (status %#x); log in %s\n", st, logpath);
		return -1;
	}
	unlink(logpath);
	return 0;
}

__attribute__((format(printf, 2, 0))) static char *vread(struct harness *h, const char *fmt,
							 va_list ap)
{
	char path[256];
	unsigned int len;

	vsnprintf(path, sizeof(path), fmt, ap);
	return xs_read(h->dom0, XBT_NULL, path, &len);
}

char *h_read(struct harness *h, const char *fmt, ...)
{
	va_list ap;
	char *v;

	va_start(ap, fmt);
	v = vread(h, fmt, ap);
	va_end(ap);
	return v;
}

int h_read_int(struct harness *h, const char *fmt, ...)
{
	va_list ap;
	char *v;
	int r;

	va_start(ap, fmt);
	v = vread(h, fmt, ap);
	va_end(ap);
	r = v ? atoi(v) : -1;
	free(v);
	return r;
}

bool h_exists(struct harness *h, const char *fmt, ...)
{
	va_list ap;
	char *v;

	va_start(ap, fmt);
	v = vread(h, fmt, ap);
	va_end(ap);
	free(v);
	return v != NULL;
}

__attribute__((format(printf, 4, 5))) static void wr(struct xs_handle *xs, const char *dir,
						     const char *key, const char *fmt, ...)
{
	char path[256], val[128];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(val, sizeof(val), fmt, ap);
	va_end(ap);
	snprintf(path, sizeof(path), "%s/%s", dir, key);
	if (!xs_write(xs, XBT_NULL, path, val, strlen(val)))
		fprintf(stderr, "harness: write %s failed: %s\n", path, strerror(errno));
}

void fb_toolstack(struct fake_be *fb, struct harness *h, uint16_t domid, uint32_t devid,
		  const struct fake_be_opts *opts)
{
	struct xs_permissions fe_perms[2] = {{.id = domid, .perms = XS_PERM_NONE},
					     {.id = 0, .perms = XS_PERM_READ}};
	struct xs_permissions be_perms[2] = {{.id = 0, .perms = XS_PERM_NONE},
					     {.id = domid, .perms = XS_PERM_READ}};

	memset(fb, 0, sizeof(*fb));
	fb->h = h;
	fb->opts = *opts;
	fb->domid = domid;
	fb->devid = devid;
	snprintf(fb->fe, sizeof(fb->fe), "/local/domain/%u/device/vif/%u", domid, devid);
	snprintf(fb->be, sizeof(fb->be), "/local/domain/0/backend/vif/%u/%u", domid, devid);
	snprintf(fb->stop_path, sizeof(fb->stop_path), "/pvnet-test/stop-%u-%u", domid, devid);
	/* As libxl does: the guest owns its frontend dir, dom0 its backend dir, each reads the other. */
	xs_mkdir(h->dom0, XBT_NULL, fb->fe);
	xs_set_permissions(h->dom0, XBT_NULL, fb->fe, fe_perms, 2);
	xs_mkdir(h->dom0, XBT_NULL, fb->be);
	xs_set_permissions(h->dom0, XBT_NULL, fb->be, be_perms, 2);
	wr(h->dom0, fb->fe, "backend", "%s", fb->be);
	wr(h->dom0, fb->fe, "backend-id", "0");
	wr(h->dom0, fb->fe, "handle", "%u", devid);
	wr(h->dom0, fb->fe, "mac", "00:16:3e:00:%02x:%02x", domid & 0xff, devid & 0xff);
	wr(h->dom0, fb->fe, "state", "%d", XenbusStateInitialising);
	wr(h->dom0, fb->be, "frontend", "%s", fb->fe);
	wr(h->dom0, fb->be, "frontend-id", "%u", domid);
	wr(h->dom0, fb->be, "handle", "%u", devid);
	wr(h->dom0, fb->be, "online", "1");
	wr(h->dom0, fb->be, "state", "%d", XenbusStateInitialising);
	/* What Linux netback's probe writes. */
	wr(h->dom0, fb->be, "feature-sg", "%d", !opts->no_sg);
	wr(h->dom0, fb->be, "feature-gso-tcpv4", "1");
	wr(h->dom0, fb->be, "feature-gso-tcpv6", "1");
	wr(h->dom0, fb->be, "feature-ipv6-csum-offload", "1");
	if (!opts->no_rx_copy)
		wr(h->dom0, fb->be, "feature-rx-copy", "1");
	wr(h->dom0, fb->be, "feature-rx-flip", "0");
	wr(h->dom0, fb->be, "feature-split-event-channels", "%d", opts->split);
	if (opts->max_queues)
		wr(h->dom0, fb->be, "multi-queue-max-queues", "%u", opts->max_queues);
	if (opts->mcast)
		wr(h->dom0, fb->be, "feature-multicast-control", "1");
	if (opts->persistent_max) {
		wr(h->dom0, fb->be, "feature-persistent", "1");
		wr(h->dom0, fb->be, "persistent-max-grants", "%u", opts->persistent_max);
	}
}

void fb_set_state(struct fake_be *fb, int state)
{
	wr(fb->h->dom0, fb->be, "state", "%d", state);
}

static int read_state(struct xs_handle *xs, const char *dir)
{
	char path[160];
	unsigned int len;
	char *v;
	int s;

	snprintf(path, sizeof(path), "%s/state", dir);
	v = xs_read(xs, XBT_NULL, path, &len);
	s = v ? atoi(v) : XenbusStateUnknown;
	free(v);
	return s;
}

/* The backend's half of the state machine, as Linux netback's set_backend_state(). */
static void *fb_thread(void *arg)
{
	struct fake_be *fb = arg;
	char path[160];

	snprintf(path, sizeof(path), "%s/state", fb->fe);
	xs_watch(fb->xs, path, "fe");
	xs_watch(fb->xs, fb->stop_path, "stop");
	for (;;) {
		unsigned int n;
		char **ev = xs_read_watch(fb->xs, &n);
		int fe, be;

		free(ev);
		if (atomic_load(&fb->stop) || !ev)
			break;
		fe = read_state(fb->xs, fb->fe);
		be = read_state(fb->xs, fb->be);
		switch (fe) {
		case XenbusStateInitialising:
			if (!fb->opts.no_initwait && be != XenbusStateInitWait)
				wr(fb->xs, fb->be, "state", "%d", XenbusStateInitWait);
			break;
		case XenbusStateConnected:
			if (fb->opts.close_on_connect && be == XenbusStateInitWait) {
				wr(fb->xs, fb->be, "state", "%d", XenbusStateClosing);
				break;
			}
			if (!fb->opts.no_connect && be == XenbusStateInitWait) {
				atomic_fetch_add(&fb->connects, 1);
				wr(fb->xs, fb->be, "state", "%d", XenbusStateConnected);
			}
			break;
		case XenbusStateClosing:
			atomic_fetch_add(&fb->closings, 1);
			if (be != XenbusStateClosing && be != XenbusStateClosed)
				wr(fb->xs, fb->be, "state", "%d", XenbusStateClosing);
			break;
		case XenbusStateClosed:
			if (be != XenbusStateClosed)
				wr(fb->xs, fb->be, "state", "%d", XenbusStateClosed);
			break;
		default:
			break;
		}
	}
	return NULL;
}

void fb_start(struct fake_be *fb)
{
	atomic_init(&fb->stop, false);
	atomic_init(&fb->connects, 0);
	atomic_init(&fb->closings, 0);
	fb->xs = xs_open(XS_OPEN_SOCKETONLY);
	if (!fb->xs || pthread_create(&fb->thread, NULL, fb_thread, fb)) {
		fprintf(stderr, "harness: cannot start the fake backend\n");
		abort();
	}
}

void fb_stop(struct fake_be *fb)
{
	atomic_store(&fb->stop, true);
	/* Any write under the watched stop path wakes the thread's xs_read_watch(). */
	xs_write(fb->h->dom0, XBT_NULL, fb->stop_path, "1", 1);
	pthread_join(fb->thread, NULL);
	xs_close(fb->xs);
	xs_rm(fb->h->dom0, XBT_NULL, fb->stop_path);
}

void *h_grant_page(struct pvnet_domain *dom, uint32_t ref, bool *readonly)
{
	struct hv_gntshr *gs = front_domain_gntshr(dom);
	grant_entry_v1_t e;

	if (ref >= gs->nr_entries)
		return NULL;
	e = gs->table[ref];
	if ((e.flags & GTF_type_mask) != GTF_permit_access || e.domid != 0)
		return NULL;
	if (readonly)
		*readonly = e.flags & GTF_readonly;
	return pvnet_domain_page(dom, e.frame);
}

int h_queue_readable(struct pvnet_vif *vif, unsigned int queue)
{
	struct pollfd p = {.fd = pvnet_queue_fd(vif, queue), .events = POLLIN};

	return poll(&p, 1, 0);
}
