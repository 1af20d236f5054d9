/*
 * PCI configuration space, parsed from the bytes of sysfs's `config` file: the PCI Express
 * capability (port type, Device Control's Relaxed Ordering bit) and the ACS extended
 * capability (which P2P redirects a switch port applies). Pure functions over a buffer.
 * An unprivileged read of `config` returns only the first 64 bytes: the answers are then
 * "unknown" (-ENODATA), never a guess.
 */
#ifndef GS_TOPO_PCICFG_H
#define GS_TOPO_PCICFG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PCICFG_STD_LEN 256   /* standard space: capability list */
#define PCICFG_EXT_LEN 4096  /* with the extended capabilities (ACS) */

/* PCIe Capabilities register, Device/Port Type field */
enum pcicfg_port {
	PCICFG_ENDPOINT = 0x0,
	PCICFG_ROOT_PORT = 0x4,
	PCICFG_SWITCH_UP = 0x5,
	PCICFG_SWITCH_DOWN = 0x6,
};

/* ACS Control register bits (PCIe base spec 7.7.8) */
#define PCICFG_ACS_SV  0x0001 /* source validation */
#define PCICFG_ACS_TB  0x0002 /* translation blocking */
#define PCICFG_ACS_RR  0x0004 /* P2P request redirect: peer writes go up to the root complex */
#define PCICFG_ACS_CR  0x0008 /* P2P completion redirect */
#define PCICFG_ACS_UF  0x0010 /* upstream forwarding */
#define PCICFG_ACS_EC  0x0020 /* P2P egress control */
#define PCICFG_ACS_DT  0x0040 /* direct translated P2P */
/* the bits that send GPU-NIC peer traffic through the root complex */
#define PCICFG_ACS_P2P_BREAKING (PCICFG_ACS_RR | PCICFG_ACS_CR | PCICFG_ACS_EC)

/* Offset of standard capability id (0x10 = PCI Express), 0 when absent, -ENODATA if unread. */
int pcicfg_find_cap(const uint8_t *cfg, size_t len, uint8_t id);
/* Offset of extended capability id (0x000d = ACS), 0 absent, -ENODATA if unread. */
int pcicfg_find_ext_cap(const uint8_t *cfg, size_t len, uint16_t id);
/* Device/Port Type (enum pcicfg_port) or -ENODATA / -ENOENT (not PCI Express). */
int pcicfg_port_type(const uint8_t *cfg, size_t len);
/* Device Control's Enable Relaxed Ordering: 1, 0, or -ENODATA / -ENOENT. */
int pcicfg_relaxed_ordering(const uint8_t *cfg, size_t len);
/* ACS Control register (>= 0), -ENOENT when the port has no ACS, -ENODATA if unread. */
int pcicfg_acs_ctrl(const uint8_t *cfg, size_t len);
/* "RR CR EC" style names of the set ACS bits into buf. */
const char *pcicfg_acs_str(int ctrl, char *buf, size_t len);

#endif
