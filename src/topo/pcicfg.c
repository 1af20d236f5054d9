/* PCI configuration space parsing: capabilities, port type, Relaxed Ordering, ACS. */
#include "topo/pcicfg.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "util/common.h"

#define CFG_STATUS	  0x06
#define CFG_STATUS_CAPS	  0x10
#define CFG_CAP_PTR	  0x34
#define CAP_ID_EXP	  0x10
#define EXP_FLAGS	  0x02 /* PCIe Capabilities register, within the capability */
#define EXP_DEVCTL	  0x08
#define EXP_DEVCTL_RELAX  0x0010
#define EXT_CAP_ID_ACS	  0x000d
#define ACS_CTRL	  0x06 /* within the ACS capability */

static unsigned rd16(const uint8_t *c, size_t off)
{
	return c[off] | (unsigned)c[off + 1] << 8;
}

static uint32_t rd32(const uint8_t *c, size_t off)
{
	return rd16(c, off) | (uint32_t)rd16(c, off + 2) << 16;
}

int pcicfg_find_cap(const uint8_t *cfg, size_t len, uint8_t id)
{
	unsigned pos, guard = 48; /* at most 48 capabilities fit in 192 bytes */

	if (len < PCICFG_STD_LEN)
		return -ENODATA;
	if (!(rd16(cfg, CFG_STATUS) & CFG_STATUS_CAPS))
		return 0;
	for (pos = cfg[CFG_CAP_PTR] & ~3u; pos >= 0x40 && guard--; pos = cfg[pos + 1] & ~3u) {
		if (cfg[pos] == id)
			return (int)pos;
	}
	return 0;
}

int pcicfg_find_ext_cap(const uint8_t *cfg, size_t len, uint16_t id)
{
	unsigned pos = 0x100, guard = 960; /* (4096 - 256) / 4 headers at most */
	uint32_t h;

	if (len < PCICFG_EXT_LEN && len < 0x100 + 8)
		return -ENODATA;
	while (guard-- && pos >= 0x100 && pos + 8 <= len) {
		h = rd32(cfg, pos);
		if (h == 0 || h == 0xffffffffu)
			return 0;
		if ((h & 0xffff) == id)
			return (int)pos;
		pos = (h >> 20) & ~3u;
	}
	return 0;
}

int pcicfg_port_type(const uint8_t *cfg, size_t len)
{
	int cap = pcicfg_find_cap(cfg, len, CAP_ID_EXP);

	if (cap <= 0)
		return cap ? cap : -ENOENT;
	return (int)((rd16(cfg, (size_t)cap + EXP_FLAGS) >> 4) & 0xf);
}

int pcicfg_relaxed_ordering(const uint8_t *cfg, size_t len)
{
	int cap = pcicfg_find_cap(cfg, len, CAP_ID_EXP);

	if (cap <= 0)
		return cap ? cap : -ENOENT;
	return (rd16(cfg, (size_t)cap + EXP_DEVCTL) & EXP_DEVCTL_RELAX) ? 1 : 0;
}

int pcicfg_acs_ctrl(const uint8_t *cfg, size_t len)
{
	int cap = pcicfg_find_ext_cap(cfg, len, EXT_CAP_ID_ACS);

	if (cap <= 0)
		return cap ? cap : -ENOENT;
	return (int)rd16(cfg, (size_t)cap + ACS_CTRL);
}

const char *pcicfg_acs_str(int ctrl, char *buf, size_t len)
{
	static const struct {
		int bit;
		const char *name;
	} bits[] = {
	    {PCICFG_ACS_SV, "SrcValid"}, {PCICFG_ACS_TB, "TransBlk"}, {PCICFG_ACS_RR, "ReqRedir"},
	    {PCICFG_ACS_CR, "CmpltRedir"}, {PCICFG_ACS_UF, "UpstreamFwd"},
	    {PCICFG_ACS_EC, "EgressCtrl"}, {PCICFG_ACS_DT, "DirectTrans"},
	};
	size_t n = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < ARRAY_SIZE(bits) && n < len; i++)
		if (ctrl & bits[i].bit)
			n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? " " : "", bits[i].name);
	if (!buf[0])
		snprintf(buf, len, "none");
	return buf;
}
