/*
 * The GNU build-id of the running executable: the note (NT_GNU_BUILD_ID) the linker
 * writes with -Wl,--build-id=sha1, a digest of the whole linked file. Two binaries
 * share it only if they are byte for byte the same program, whatever their version
 * strings say: ranks compare it before a job (run/agree.c), reports record it, and
 * `readelf -n` or `file` show the same hex.
 */
#ifndef GS_UTIL_BUILD_ID_H
#define GS_UTIL_BUILD_ID_H

#include <stddef.h>

/* The longest build-id kept, in bytes (sha1 is 20; --build-id=0x... may be longer). */
#define BUILD_ID_MAX 64
/* Room for its lowercase hex and the NUL. */
#define BUILD_ID_HEX_LEN (2 * BUILD_ID_MAX + 1)

/*
 * The main executable's build-id as lowercase hex into hex (len >= BUILD_ID_HEX_LEN):
 * 0, or -ENOENT when it carries none (linked without --build-id), hex then "".
 */
int build_id_self(char *hex, size_t len);

/*
 * The build-id among the notes of one PT_NOTE segment or SHT_NOTE section (notes, size
 * bytes, its alignment align: 4, or 8 for 8-aligned note segments): 0 with the hex, or
 * -ENOENT when no GNU build-id note is there (hex ""), -EINVAL when a note overruns the
 * segment or the id is longer than BUILD_ID_MAX.
 */
int build_id_from_notes(const void *notes, size_t size, size_t align, char *hex, size_t len);

#endif
