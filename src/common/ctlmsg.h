/* SPDX-License-Identifier: MIT */
/* ctlmsg.h - framing of pvnetd's control socket: one JSON object per datagram, with fds */
#ifndef PVNET_COMMON_CTLMSG_H
#define PVNET_COMMON_CTLMSG_H

#include <stdbool.h>

#include <jansson.h>

/*
 * Theory of Operation
 *
 * pvnetd's control socket (DIR/pvnetd.sock) is an AF_UNIX SOCK_SEQPACKET
 * socket, so the kernel keeps message boundaries and every message is one
 * recvmsg().  A message is a JSON object (UTF-8, not NUL-terminated) of at
 * most CTLMSG_MAX bytes; file descriptors travel with it as SCM_RIGHTS
 * (a domain's memfd, the grant-table memfd, event-channel eventfds).  A
 * request names its operation in "op"; a reply carries either the result
 * members or "error" (a message for people) and "errno" (positive).  The
 * control plane is not the data path: JSON costs nothing that matters here
 * and lets `pvnet` print replies as they come.
 */

/* The control socket's name in pvnetd's run directory. */
#define CTLMSG_SOCK_NAME "pvnetd.sock"

/* Largest control message: far above any request, small enough for the stack of a reader. */
#define CTLMSG_MAX 65536
/* Most fds one message carries: a queue's event channels and rings fit easily. */
#define CTLMSG_MAX_FDS 8

/**
 * ctlmsg_connect() - connect to the control socket of the pvnetd serving @run_dir
 * @run_dir: pvnetd's run directory (its socket is @run_dir/CTLMSG_SOCK_NAME)
 *
 * Return: the connected SOCK_SEQPACKET socket (close-on-exec), or -errno
 * (-ENAMETOOLONG when the path does not fit a socket address)
 */
int ctlmsg_connect(const char *run_dir);

/**
 * ctlmsg_send() - send one JSON object with optional file descriptors
 * @sock: connected SOCK_SEQPACKET socket
 * @msg: the object (not consumed)
 * @fds: descriptors to pass, or NULL
 * @nfds: how many, at most CTLMSG_MAX_FDS
 *
 * Return: 0 or -errno (-EMSGSIZE if the text exceeds CTLMSG_MAX)
 */
int ctlmsg_send(int sock, const json_t *msg, const int *fds, unsigned int nfds);

/**
 * ctlmsg_recv() - receive one message; blocks unless @sock is non-blocking
 * @sock: connected SOCK_SEQPACKET socket
 * @msg: set to the parsed object (caller json_decref()s it)
 * @fds: array of CTLMSG_MAX_FDS receiving descriptors (O_CLOEXEC), or NULL to close any
 * @nfds: set to the number received
 *
 * Every received descriptor is either returned or closed, also on error.
 *
 * Return: 0; -ECONNRESET on orderly shutdown; -EBADMSG for a message that is
 * truncated, not JSON or not an object; other -errno from recvmsg()
 */
int ctlmsg_recv(int sock, json_t **msg, int *fds, unsigned int *nfds);

/**
 * ctlmsg_recv_why() - ctlmsg_recv(), saying what was wrong with a bad message
 * @sock: as ctlmsg_recv()
 * @msg: as ctlmsg_recv()
 * @fds: as ctlmsg_recv()
 * @nfds: as ctlmsg_recv()
 * @why: on -EBADMSG, receives why, for the sender (e.g. the JSON parser's
 *	message and the byte it stopped at)
 * @whylen: size of @why
 *
 * Return: as ctlmsg_recv()
 */
int ctlmsg_recv_why(int sock, json_t **msg, int *fds, unsigned int *nfds, char *why, size_t whylen);

/**
 * ctlmsg_send_refused() - did a request's send fail because the server closed the connection?
 * @rc: ctlmsg_send()'s return
 *
 * A server that refuses a connection (pvnetd past its most) sends why and
 * closes it: a request sent then fails (EPIPE), yet the reason waits to be
 * read with ctlmsg_recv_reply().
 *
 * Return: true for -EPIPE and -ECONNRESET
 */
bool ctlmsg_send_refused(int rc);

/**
 * ctlmsg_recv_reply() - ctlmsg_recv() of a reply, also after the server closed
 * @sock: as ctlmsg_recv()
 * @msg: as ctlmsg_recv()
 * @fds: as ctlmsg_recv()
 * @nfds: as ctlmsg_recv()
 *
 * A peer that closes with our request unread makes the first receive say
 * ECONNRESET before the message it sent first: that message is read.  A
 * closed peer never blocks the call.
 *
 * Return: as ctlmsg_recv()
 */
int ctlmsg_recv_reply(int sock, json_t **msg, int *fds, unsigned int *nfds);

/**
 * ctlmsg_set_timeout() - bound every later send and receive on a client socket
 * @sock: connected, blocking socket
 * @ms: the bound, in milliseconds (more than 0)
 *
 * ctlmsg_call() on @sock then fails with -ETIMEDOUT when pvnetd does not
 * answer in time (a stopped or stuck pvnetd must not hang a command line).
 *
 * Return: 0 or -errno
 */
int ctlmsg_set_timeout(int sock, unsigned int ms);

/**
 * ctlmsg_call() - send a request and wait for its reply (client side)
 * @sock: connected socket
 * @req: request object (not consumed)
 * @fds: descriptors to pass with the request
 * @nfds: how many
 * @reply: set to the reply; if it holds "error", -errno from it is returned
 * @rfds: CTLMSG_MAX_FDS slots for descriptors in the reply, or NULL
 * @nrfds: set to how many arrived
 *
 * Return: 0, -ETIMEDOUT (past ctlmsg_set_timeout()'s bound), or -errno (the
 * reply is still set when the server answered an error)
 */
int ctlmsg_call(int sock, const json_t *req, const int *fds, unsigned int nfds, json_t **reply,
		int *rfds, unsigned int *nrfds);

/**
 * ctlmsg_error() - build an error reply
 * @err: positive errno
 * @fmt: printf format of the message for people
 *
 * Return: a new object, or NULL on allocation failure
 */
json_t *ctlmsg_error(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif /* PVNET_COMMON_CTLMSG_H */
