/* SPDX-License-Identifier: MIT */
/* mac.h - Ethernet addresses written as text */
#ifndef PVNET_COMMON_MAC_H
#define PVNET_COMMON_MAC_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

/**
 * mac_parse() - read exactly "xx:xx:xx:xx:xx:xx", as `ip link` and xenstore's
 *	vif "mac" key write an address
 * @s: the text, NUL-terminated
 * @mac: receives the address (written only on success)
 *
 * Each x is a hexadecimal digit, either case; nothing else is taken (no
 * sign, no blank, no single-digit byte, nothing after the last pair).
 *
 * Return: 0, or -EINVAL
 */
int mac_parse(const char *s, uint8_t mac[6]);

/* Is @mac one a guest may have: unicast and not all zero? */
static inline bool mac_is_unicast(const uint8_t mac[6])
{
	return !(mac[0] & 1) && (mac[0] | mac[1] | mac[2] | mac[3] | mac[4] | mac[5]);
}

/* mac_parse(), and the address must be one a guest may have; 0 or -EINVAL. */
static inline int mac_parse_guest(const char *s, uint8_t mac[6])
{
	return mac_parse(s, mac) == 0 && mac_is_unicast(mac) ? 0 : -EINVAL;
}

#endif /* PVNET_COMMON_MAC_H */
