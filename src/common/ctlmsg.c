// SPDX-License-Identifier: MIT
/* ctlmsg.c - framing of pvnetd's control socket: one JSON object per datagram, with fds */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/ctlmsg.h"

int ctlmsg_connect(const char *run_dir)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd;

	if ((size_t)snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/%s", run_dir,
			     CTLMSG_SOCK_NAME) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	return fd;
}

int ctlmsg_send(int sock, const json_t *msg, const int *fds, unsigned int nfds)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * CTLMSG_MAX_FDS)];
		struct cmsghdr align;
	} u;
	struct msghdr mh = {0};
	struct iovec iov;
	char *text;
	ssize_t n;
	int rc = 0;

	if (nfds > CTLMSG_MAX_FDS)
		return -EINVAL;
	text = json_dumps(msg, JSON_COMPACT);
	if (!text)
		return -ENOMEM;
	iov.iov_base = text;
	iov.iov_len = strlen(text);
	if (iov.iov_len > CTLMSG_MAX) {
		rc = -EMSGSIZE;
		goto free_text;
	}
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	if (nfds) {
		struct cmsghdr *cm;

		memset(&u, 0, sizeof(u));
		mh.msg_control = u.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(cm), fds, sizeof(int) * nfds);
	}
	do {
		n = sendmsg(sock, &mh, MSG_NOSIGNAL);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		rc = -errno;
	else if ((size_t)n != iov.iov_len)
		rc = -EMSGSIZE;
free_text:
	free(text);
	return rc;
}

int ctlmsg_recv(int sock, json_t **msg, int *fds, unsigned int *nfds)
{
	return ctlmsg_recv_why(sock, msg, fds, nfds, NULL, 0);
}

int ctlmsg_recv_why(int sock, json_t **msg, int *fds, unsigned int *nfds, char *why, size_t whylen)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * CTLMSG_MAX_FDS)];
		struct cmsghdr align;
	} u;
	struct msghdr mh = {0};
	struct cmsghdr *cm;
	struct iovec iov;
	unsigned int got = 0;
	json_error_t jerr;
	char *buf;
	ssize_t n;
	int rc = 0;

	*msg = NULL;
	*nfds = 0;
	/* One byte more than allowed, so an oversized message shows as MSG_TRUNC or a full buffer. */
	buf = malloc(CTLMSG_MAX + 1);
	if (!buf)
		return -ENOMEM;
	iov.iov_base = buf;
	iov.iov_len = CTLMSG_MAX + 1;
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = u.buf;
	mh.msg_controllen = sizeof(u.buf);
	do {
		n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	} while (n < 0 && errno == EINTR);
	if (n < 0) {
		rc = -errno;
		goto free_buf;
	}
	/* Take ownership of every descriptor first, so none leaks on any error below. */
	for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
		size_t cnt;
		int *p;

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		cnt = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		p = (int *)(void *)CMSG_DATA(cm);
		for (size_t i = 0; i < cnt; i++) {
			if (fds && got < CTLMSG_MAX_FDS)
				fds[got++] = p[i];
			else
				close(p[i]);
		}
	}
	if (n == 0) {
		rc = -ECONNRESET;
		goto close_fds;
	}
	rc = -EBADMSG;
	if (mh.msg_flags & MSG_CTRUNC) {
		if (why)
			snprintf(why, whylen, "more than %d file descriptors attached",
				 CTLMSG_MAX_FDS);
		goto close_fds;
	}
	if ((mh.msg_flags & MSG_TRUNC) || n > CTLMSG_MAX) {
		if (why)
			snprintf(why, whylen, "longer than %d bytes", CTLMSG_MAX);
		goto close_fds;
	}
	*msg = json_loadb(buf, (size_t)n, JSON_REJECT_DUPLICATES, &jerr);
	if (!*msg) {
		if (why)
			snprintf(why, whylen, "not JSON: %s (byte %d)", jerr.text, jerr.position);
		goto close_fds;
	}
	if (!json_is_object(*msg)) {
		json_decref(*msg);
		*msg = NULL;
		if (why)
			snprintf(why, whylen, "not a JSON object");
		goto close_fds;
	}
	*nfds = got;
	free(buf);
	return 0;

close_fds:
	while (got)
		close(fds[--got]);
free_buf:
	free(buf);
	return rc;
}

int ctlmsg_set_timeout(int sock, unsigned int ms)
{
	struct timeval tv = {.tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000};

	if (setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0 ||
	    setsockopt(sock, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0)
		return -errno;
	return 0;
}

bool ctlmsg_send_refused(int rc)
{
	return rc == -EPIPE || rc == -ECONNRESET;
}

int ctlmsg_recv_reply(int sock, json_t **msg, int *fds, unsigned int *nfds)
{
	int rc = ctlmsg_recv(sock, msg, fds, nfds);

	/* The reset is the peer's close with our request unread; its message is still queued. */
	return rc == -ECONNRESET ? ctlmsg_recv(sock, msg, fds, nfds) : rc;
}

int ctlmsg_call(int sock, const json_t *req, const int *fds, unsigned int nfds, json_t **reply,
		int *rfds, unsigned int *nrfds)
{
	unsigned int dummy;
	json_t *e;
	int rc;

	*reply = NULL;
	if (!nrfds)
		nrfds = &dummy;
	/* A client socket is blocking: EAGAIN is the bound of ctlmsg_set_timeout() passing. */
	rc = ctlmsg_send(sock, req, fds, nfds);
	if (rc == -EAGAIN)
		return -ETIMEDOUT;
	if (rc < 0 && !ctlmsg_send_refused(rc))
		return rc;
	rc = ctlmsg_recv_reply(sock, reply, rfds, nrfds);
	if (rc < 0)
		return rc == -EAGAIN ? -ETIMEDOUT : rc;
	e = json_object_get(*reply, "errno");
	if (json_object_get(*reply, "error")) {
		int v = json_is_integer(e) ? (int)json_integer_value(e) : EIO;

		return v > 0 ? -v : -EIO;
	}
	return 0;
}

json_t *ctlmsg_error(int err, const char *fmt, ...)
{
	char text[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	return json_pack("{s:s, s:i}", "error", text, "errno", err);
}
