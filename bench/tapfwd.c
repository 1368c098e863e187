// SPDX-License-Identifier: MIT
/* tapfwd.c - the tcp section's third path: the cheapest user-space path between two TAPs */

/*
 * Two TAP devices with the virtio-net header and the offloads pvnet attach
 * asks for (checksum, TSO for IPv4 and IPv6), and one thread per direction
 * that reads a frame from one and writes it to the other, blocking in
 * both: two copies per byte (the TAP read and the TAP write), no hop
 * through another process, no batching, no polling.  Every user-space
 * TAP path pays at least this, so bench/tcp-vs-veth.sh measures it beside
 * pvnet and veth: the distance from pvnet to it is what pvnet's own design
 * costs (a third copy, the hop through pvnetd), the distance from it to
 * veth is what any TAP-based path costs on the machine.
 *
 * Not part of pvnet: a peer for the benchmark, like the memif and veth
 * ones.  The kernel checks every frame written (the vnet header included),
 * so frames are passed on as read.  Runs until killed; the TAPs go with it.
 *
 * usage: tapfwd TAP_A TAP_B   (root; prints "ready" once both exist)
 */

#include <errno.h>
#include <fcntl.h>
#include <linux/if_tun.h>
#include <linux/virtio_net.h>
#include <net/if.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

/* The largest frame a TAP hands over with TSO (64 KiB of IP) and its header. */
#define FRAME_MAX (sizeof(struct virtio_net_hdr) + 14u + 65535u)

struct dir {
	int in, out;
	const char *name;
};

static int tap_open(const char *name)
{
	struct ifreq ifr = {.ifr_flags = IFF_TAP | IFF_NO_PI | IFF_VNET_HDR};
	int fd;

	if (strlen(name) >= sizeof(ifr.ifr_name)) {
		fprintf(stderr, "tapfwd: interface name too long: %s\n", name);
		exit(2);
	}
	memcpy(ifr.ifr_name, name, strlen(name) + 1);
	fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
	if (fd < 0 || ioctl(fd, TUNSETIFF, &ifr) < 0 ||
	    ioctl(fd, TUNSETOFFLOAD, TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO6) < 0) {
		fprintf(stderr, "tapfwd: %s: %s\n", name, strerror(errno));
		exit(1);
	}
	return fd;
}

static void *forward(void *arg)
{
	const struct dir *d = arg;
	unsigned char *buf = malloc(FRAME_MAX);

	if (!buf) {
		fprintf(stderr, "tapfwd: out of memory\n");
		exit(1);
	}
	for (;;) {
		ssize_t r = read(d->in, buf, FRAME_MAX);

		if (r < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			fprintf(stderr, "tapfwd: %s: read: %s\n", d->name, strerror(errno));
			exit(1);
		}
		/* A refused frame (the other TAP still down) is dropped, as a wire would. */
		if (r > 0 && write(d->out, buf, (size_t)r) < 0 && errno != EIO && errno != EINVAL)
			fprintf(stderr, "tapfwd: %s: write: %s\n", d->name, strerror(errno));
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct dir ab, ba;
	pthread_t t;
	int a, b, rc;

	if (argc != 3) {
		fprintf(stderr, "usage: tapfwd TAP_A TAP_B\n");
		return 2;
	}
	a = tap_open(argv[1]);
	b = tap_open(argv[2]);
	ab = (struct dir){.in = a, .out = b, .name = argv[1]};
	ba = (struct dir){.in = b, .out = a, .name = argv[2]};
	printf("ready\n");
	fflush(stdout);
	rc = pthread_create(&t, NULL, forward, &ab);
	if (rc) {
		fprintf(stderr, "tapfwd: pthread_create: %s\n", strerror(rc));
		return 1;
	}
	forward(&ba);
	return 0;
}
