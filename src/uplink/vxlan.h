/* SPDX-License-Identifier: MIT */
/* vxlan.h - VXLAN (RFC 7348): the uplink's specification and its header, pure functions */
#ifndef PVNET_UPLINK_VXLAN_H
#define PVNET_UPLINK_VXLAN_H

/*
 * Theory of Operation
 *
 * A VXLAN uplink joins pvnetd's segment to the segment of other VXLAN
 * tunnel endpoints — another pvnetd, or a Linux `vxlan` device (`ip link
 * add NAME type vxlan id VNI remote ADDR dstport 4789`) — over UDP.  Each
 * Ethernet frame travels as one UDP datagram: an 8-byte VXLAN header, then
 * the frame (no FCS):
 *
 *   byte 0      flags: 0x08 (the I flag: the VNI is valid), nothing else
 *   bytes 1-3   reserved, 0
 *   bytes 4-6   VNI, the 24-bit segment number, big endian
 *   byte 7      reserved, 0
 *
 * RFC 7348 says a receiver ignores the reserved bits; Linux's vxlan driver
 * drops a datagram with any unknown bit set (it may carry an extension the
 * receiver does not understand), and so does this uplink.
 *
 * Here: parsing the uplink's specification (pvnetd --uplink vxlan:...),
 * writing a header and checking a received datagram, all without system
 * calls, so that the tests and a fuzzer call them directly.  The port
 * itself (sockets, threads) is vxlan_port.c.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include "uplink/tap.h" /* UPLINK_NETNS_MAX */

/* The VXLAN header (RFC 7348, section 5). */
#define UPLINK_VXLAN_HLEN 8u
/* Its flags byte: the I flag alone. */
#define UPLINK_VXLAN_FLAG_I 0x08u
/* IANA's port for VXLAN (Linux's default is the same when dstport is given as 4789). */
#define UPLINK_VXLAN_PORT 4789u
/* VNIs are 24 bits. */
#define UPLINK_VXLAN_VNI_MAX 0xffffffu
/* The default MTU of the frames it carries: the Ethernet default, as a Linux vxlan device's. */
#define UPLINK_VXLAN_MTU 1500u
/*
 * The largest MTU: a frame (the MTU, an Ethernet header and one VLAN tag)
 * and the VXLAN header must fit one UDP datagram over IPv6 (65535 bytes
 * of UDP payload less the UDP header); IPv4's limit is 20 bytes lower
 * and the socket refuses what it cannot send (counted).
 */
#define UPLINK_VXLAN_MTU_MAX (65535u - 8u - UPLINK_VXLAN_HLEN - 18u)
/* Remote endpoints one uplink may name (remote= given once each). */
#define UPLINK_VXLAN_REMOTES_MAX 8u
/* Source ports (sockets) the datagrams of a tunnel leave from, at most: a flow keeps one. */
#define UPLINK_VXLAN_SRCPORTS_MAX 8u

/**
 * struct uplink_vxlan_spec - one VXLAN uplink, as parsed from its specification
 * @vni: the segment number, 0..UPLINK_VXLAN_VNI_MAX
 * @dstport: UDP port, ours and the remote's (as Linux's dstport)
 * @mtu: the largest frame payload carried (frames longer are dropped)
 * @remote: the remote endpoints, in the order given (their port is @dstport)
 * @nremotes: how many, 1..UPLINK_VXLAN_REMOTES_MAX
 * @remote_len: the length of each (one family)
 * @local: the address we bind (the wildcard of @remote's family if not
 *	given), port @dstport
 * @local_len: its length
 * @srcport_min: the lowest UDP source port of the datagrams we send, 0 for
 *	ports the kernel picks (its ephemeral range, as Linux's default)
 * @srcport_max: the highest (0 with @srcport_min 0)
 * @netns: the network namespace of the socket, "" for pvnetd's own
 * @name: the switch port's name: "vxlan<VNI>", or "vxlan<VNI>:<PORT>" when
 *	@dstport is not 4789
 * @share: the receiving socket shares its address and port with other
 *	uplinks' (each of another VNI), as uplink_vxlan_spec_shares() says;
 *	not parsed: set by whoever knows every uplink (pvnetd's main), false
 *	from the parser
 */
struct uplink_vxlan_spec {
	uint32_t vni;
	uint16_t dstport;
	uint32_t mtu;
	struct sockaddr_storage remote[UPLINK_VXLAN_REMOTES_MAX];
	unsigned int nremotes;
	socklen_t remote_len;
	struct sockaddr_storage local;
	socklen_t local_len;
	uint16_t srcport_min, srcport_max;
	char netns[UPLINK_NETNS_MAX + 1];
	char name[32];
	bool share;
};

/**
 * uplink_vxlan_spec_parse() - parse "vxlan:id=VNI,remote=ADDR[,remote=ADDR...][,local=ADDR][,dstport=PORT][,srcport=MIN-MAX][,mtu=N][,netns=NS]"
 * @spec: the --uplink argument
 * @out: filled on success
 * @err: receives why not, on failure
 * @errlen: room at @err
 *
 * Keys as `ip link add ... type vxlan` names them; id and remote are
 * required.  remote may be given up to UPLINK_VXLAN_REMOTES_MAX times,
 * each address once (the other VTEPs of the segment, as the entries a
 * Linux device's all-zeroes FDB entry lists), every other key once.  ADDR
 * is a numeric IPv4 or IPv6 address; a remote must be unicast (no
 * multicast group), every remote and local, if given, of one family.
 * dstport is 1..65535 (default 4789), srcport MIN-MAX with 1 <= MIN <=
 * MAX <= 65535 (default: ports the kernel picks), mtu
 * 68..UPLINK_VXLAN_MTU_MAX (default 1500).
 *
 * Return: 0, or -EINVAL with @err set
 */
int uplink_vxlan_spec_parse(const char *spec, struct uplink_vxlan_spec *out, char *err,
			    size_t errlen);

/**
 * uplink_vxlan_spec_same() - would two uplinks be the same tunnel (a loop)?
 * @a: one
 * @b: the other
 *
 * Return: true if they share namespace, VNI, port and a remote
 */
bool uplink_vxlan_spec_same(const struct uplink_vxlan_spec *a, const struct uplink_vxlan_spec *b);

/**
 * uplink_vxlan_addr_any() - is @ss the wildcard address of its family?
 * @ss: an AF_INET or AF_INET6 address
 */
bool uplink_vxlan_addr_any(const struct sockaddr_storage *ss);

/**
 * uplink_vxlan_addr_equal() - do @a and @b hold the same address, ports aside?
 * @a: an AF_INET or AF_INET6 address (at least that family's sockaddr)
 * @b: another
 */
bool uplink_vxlan_addr_equal(const struct sockaddr_storage *a, const struct sockaddr_storage *b);

/**
 * uplink_vxlan_addr_str() - an address of a specification, as text
 * @ss: an AF_INET or AF_INET6 address
 * @buf: receives it (the port left out)
 */
void uplink_vxlan_addr_str(const struct sockaddr_storage *ss, char buf[INET6_ADDRSTRLEN]);

/**
 * uplink_vxlan_spec_shares() - would two uplinks receive on one address and port?
 * @a: one
 * @b: the other
 *
 * As several vxlan devices of one dstport on a Linux host: uplinks of one
 * namespace, family, local address (both the wildcard, or one address)
 * and dstport share that port, each taking the datagrams of its own VNI
 * (vxlan_sock.h).  Whether they may is uplink_vxlan_spec_clash()'s answer.
 *
 * Return: true if they would share their receiving port
 */
bool uplink_vxlan_spec_shares(const struct uplink_vxlan_spec *a, const struct uplink_vxlan_spec *b);

/**
 * uplink_vxlan_spec_clash() - would two uplinks' sockets fight over one UDP port?
 * @a: one
 * @b: the other
 * @err: receives which port and why, when they would
 * @errlen: room at @err
 *
 * Each uplink binds its own receiving socket on its dstport and its
 * sending sockets in its srcport range.  Uplinks that share a port
 * (uplink_vxlan_spec_shares()) must take different VNIs: the VNI is how a
 * datagram finds its uplink (a Linux host refuses a second vxlan device of
 * one VNI and port alike; one uplink may list several remotes).  Two of
 * one namespace and family whose local addresses overlap without being
 * equal (one the wildcard, the other an address) cannot both have a
 * dstport: the address's socket would take every datagram sent to it.
 * Nor may one's srcport range hold another dstport than its own.
 *
 * Return: true if they clash, with @err set
 */
bool uplink_vxlan_spec_clash(const struct uplink_vxlan_spec *a, const struct uplink_vxlan_spec *b,
			     char *err, size_t errlen);

/**
 * uplink_vxlan_hdr() - write the VXLAN header of segment @vni
 * @hdr: UPLINK_VXLAN_HLEN bytes
 * @vni: the segment
 */
void uplink_vxlan_hdr(uint8_t hdr[UPLINK_VXLAN_HLEN], uint32_t vni);

/* Why a received datagram was dropped: UPLINK_VXLAN_DROP_* - 1 is its counter index. */
enum uplink_vxlan_drop {
	UPLINK_VXLAN_DROP_RUNT,	    /* shorter than the header and an Ethernet header */
	UPLINK_VXLAN_DROP_HEADER,   /* flags other than the I flag alone, reserved bits set */
	UPLINK_VXLAN_DROP_VNI,	    /* another segment's VNI */
	UPLINK_VXLAN_DROP_OVERSIZE, /* frame over the MTU */
	UPLINK_VXLAN_DROP_SOURCE,   /* not from the remote endpoint */
	UPLINK_VXLAN_DROP_TRUNC,    /* longer than a receive buffer (truncated) */
	UPLINK_VXLAN_DROP_ECN,	    /* marked CE outside, an IP packet not ECN-capable inside */
	UPLINK_VXLAN_DROP_NR,
};

/*
 * ECN through the tunnel (RFC 6040's normal mode; Linux's vxlan differs
 * only in sending an inner CE as ECT(0) outside): a
 * datagram's outer ECN field is its frame's, and on the way in a
 * congestion mark (CE) the underlay set is carried onto the frame's own
 * IP header, or the frame is dropped if its IP packet is not ECN-capable
 * (it could not carry the mark, and the congestion would go unheard).
 */
#define UPLINK_ECN_MASK 3u
#define UPLINK_ECN_ECT1 1u
#define UPLINK_ECN_ECT0 2u
#define UPLINK_ECN_CE	3u

/**
 * uplink_vxlan_ecn_inner() - the ECN field of a frame's IPv4 or IPv6 header
 * @frame: the frame's first bytes (a private copy)
 * @len: bytes at @frame
 *
 * Return: 0..3; 0 (not ECN-capable) for what is not IP or is cut short
 */
uint8_t uplink_vxlan_ecn_inner(const uint8_t *frame, uint32_t len);

/**
 * uplink_vxlan_ecn_decap() - carry a datagram's outer ECN field onto its frame
 * @frame: the whole frame (private, written in place)
 * @len: its length
 * @outer: the outer IP header's ECN field (0..3)
 *
 * CE over an ECN-capable IPv4 or IPv6 packet marks it CE (the IPv4 header
 * checksum kept right); ECT(1) over ECT(0) makes it ECT(1); anything else
 * leaves the frame as it is.
 *
 * Return: 0, or -(UPLINK_VXLAN_DROP_ECN + 1) for CE over a packet that is not ECN-capable
 */
int uplink_vxlan_ecn_decap(uint8_t *frame, uint32_t len, uint8_t outer);

/**
 * uplink_vxlan_drop_name() - the counter name of a drop reason, e.g. "rx_bad_vni"
 * @d: the reason
 *
 * Return: a static string ("?" for an unknown reason)
 */
const char *uplink_vxlan_drop_name(enum uplink_vxlan_drop d);

/**
 * uplink_vxlan_check() - check a received datagram's VXLAN header and frame
 * @dgram: the UDP payload (a private copy)
 * @len: its length
 * @vni: our segment
 * @mtu: the largest frame payload we accept
 *
 * The frame is @dgram + UPLINK_VXLAN_HLEN, @len - UPLINK_VXLAN_HLEN bytes:
 * at least an Ethernet header, and no more than the MTU past its network
 * header (after an optional 802.1Q tag).
 *
 * Return: the frame's length, or -(reason + 1) (enum uplink_vxlan_drop)
 */
int uplink_vxlan_check(const uint8_t *dgram, uint32_t len, uint32_t vni, uint32_t mtu);

/**
 * uplink_vxlan_flow_hash() - a hash of the flow a frame belongs to, for its source port
 * @hdr: the frame's first bytes (a private copy)
 * @len: bytes at @hdr
 *
 * RFC 7348 (section 5) recommends a source port computed from the inner
 * packet, so that the network between the VTEPs (ECMP, a receiving NIC's
 * RSS) can spread tunnelled flows apart while keeping each in order.  For a
 * TCP or UDP packet (sw_frame_parse()) the hash covers the IP addresses,
 * the protocol and the ports; for anything else the Ethernet addresses and
 * type.  It depends on nothing else: every segment of a GSO frame, and the
 * frame itself, hash alike.
 *
 * Return: the hash
 */
uint32_t uplink_vxlan_flow_hash(const uint8_t *hdr, uint32_t len);

#endif /* PVNET_UPLINK_VXLAN_H */
