/* Reading the GNU build-id note of the running executable through its program headers. */
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "util/build_id.h"
#include "util/common.h"

/*
 * Each note: namesz, descsz, type (4-byte words in 32- and 64-bit ELF alike), the name
 * ("GNU\0" for ours), then the descriptor, which starts, as the next note does, at the
 * segment's alignment counted from the note's start (glibc's ELF_NOTE_DESC_OFFSET): in
 * an 8-aligned segment the 4-byte name "GNU\0" is followed by no padding.
 */
int build_id_from_notes(const void *notes, size_t size, size_t align, char *hex, size_t len)
{
	const uint8_t *p = notes, *end = p + size;

	if (len)
		hex[0] = '\0';
	if (align != 8)
		align = 4;
	while ((size_t)(end - p) >= sizeof(Elf32_Nhdr)) {
		Elf32_Nhdr n;
		size_t desc_off, next_off;
		const uint8_t *name, *desc;

		memcpy(&n, p, sizeof(n));
		desc_off = GS_ALIGN_UP(sizeof(n) + (size_t)n.n_namesz, align);
		next_off = GS_ALIGN_UP(desc_off + (size_t)n.n_descsz, align);
		if (desc_off > (size_t)(end - p) || next_off > (size_t)(end - p) ||
		    next_off < desc_off)
			return -EINVAL;
		name = p + sizeof(n);
		desc = p + desc_off;
		if (n.n_type == NT_GNU_BUILD_ID && n.n_namesz == sizeof(ELF_NOTE_GNU) &&
		    !memcmp(name, ELF_NOTE_GNU, sizeof(ELF_NOTE_GNU))) {
			if (!n.n_descsz || n.n_descsz > BUILD_ID_MAX || len < 2 * n.n_descsz + 1)
				return -EINVAL;
			for (size_t i = 0; i < n.n_descsz; i++)
				snprintf(hex + 2 * i, 3, "%02x", desc[i]);
			return 0;
		}
		p += next_off;
	}
	return -ENOENT;
}

struct build_id_walk {
	char *hex;
	size_t len;
	int ret;
};

/* dl_iterate_phdr visits the main program first: its notes decide, then stop. */
static int main_object_notes(struct dl_phdr_info *info, size_t size, void *data)
{
	struct build_id_walk *w = data;

	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_NOTE)
			continue;
		w->ret = build_id_from_notes((const void *)(info->dlpi_addr + ph->p_vaddr),
					     ph->p_memsz, ph->p_align, w->hex, w->len);
		if (!w->ret) /* a malformed segment hides no id another one holds */
			break;
	}
	return 1;
}

int build_id_self(char *hex, size_t len)
{
	struct build_id_walk w = {.hex = hex, .len = len, .ret = -ENOENT};

	if (len)
		hex[0] = '\0';
	dl_iterate_phdr(main_object_notes, &w);
	if (w.ret && len)
		hex[0] = '\0';
	return w.ret;
}
