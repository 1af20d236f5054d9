/* util/build_id: hand-made note segments, and this test binary's own id against readelf's. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "util/build_id.h"
#include "util/common.h"

/* Append one note (name with its NUL, desc) to buf at *off, laid out for align (4 or 8). */
static void note_add(uint8_t *buf, size_t *off, size_t align, uint32_t type, const char *name,
		     const void *desc, uint32_t desc_len)
{
	Elf32_Nhdr n = {
	    .n_namesz = (uint32_t)strlen(name) + 1, .n_descsz = desc_len, .n_type = type};
	size_t start = *off;

	memcpy(buf + *off, &n, sizeof(n));
	memcpy(buf + *off + sizeof(n), name, n.n_namesz);
	*off = start + GS_ALIGN_UP(sizeof(n) + n.n_namesz, align);
	memcpy(buf + *off, desc, desc_len);
	*off = start + GS_ALIGN_UP(*off - start + desc_len, align);
}

static void test_build_id_notes(void **state)
{
	static const uint8_t sha1[20] = {0x1a, 0x2b, 0x3c, 0x4d, 0x5e, 0x6f, 0x7a,
					 0x8b, 0x9c, 0x0d, 0xe1, 0xf2, 0x03, 0x14,
					 0x25, 0x36, 0x47, 0x58, 0x69, 0xff};
	static const uint8_t abi[16] = {0}, odd[3] = {0xab, 0xcd, 0xef};
	static const uint8_t big[BUILD_ID_MAX + 1] = {0};
	static const struct {
		const char *what;
		size_t align;
		const char *before; /* a note of this owner (type 1 or 3) first; NULL: none */
		uint32_t before_type;
		const void *id;
		uint32_t id_len;
		size_t cut; /* bytes cut off the end */
		int ret;
		const char *hex;
	} v[] = {
	    {"sha1 alone", 4, NULL, 0, sha1, 20, 0, 0, "1a2b3c4d5e6f7a8b9c0de1f203142536475869ff"},
	    {"after the ABI tag", 4, "GNU", NT_GNU_ABI_TAG, sha1, 20, 0, 0,
	     "1a2b3c4d5e6f7a8b9c0de1f203142536475869ff"},
	    {"8-aligned, after a property note", 8, "GNU", 5, sha1, 20, 0, 0,
	     "1a2b3c4d5e6f7a8b9c0de1f203142536475869ff"},
	    {"3 bytes, padded", 4, NULL, 0, odd, 3, 0, 0, "abcdef"},
	    {"type 3 of another owner", 4, "Go", NT_GNU_BUILD_ID, NULL, 0, 0, -ENOENT, ""},
	    {"no note", 4, NULL, 0, NULL, 0, 0, -ENOENT, ""},
	    {"cut short", 4, NULL, 0, sha1, 20, 1, -EINVAL, ""},
	    {"longer than BUILD_ID_MAX", 4, NULL, 0, big, sizeof(big), 0, -EINVAL, ""},
	};
	uint8_t buf[512];
	char hex[BUILD_ID_HEX_LEN];

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(v); i++) {
		size_t off = 0;

		memset(buf, 0, sizeof(buf));
		if (v[i].before)
			note_add(buf, &off, v[i].align, v[i].before_type, v[i].before, abi,
				 sizeof(abi));
		if (v[i].id)
			note_add(buf, &off, v[i].align, NT_GNU_BUILD_ID, "GNU", v[i].id,
				 v[i].id_len);
		strcpy(hex, "x");
		int ret = build_id_from_notes(buf, off - v[i].cut, v[i].align, hex, sizeof(hex));

		if (ret != v[i].ret || strcmp(hex, v[i].hex))
			fail_msg("%s: %d '%s', expected %d '%s'", v[i].what, ret, hex, v[i].ret,
				 v[i].hex);
	}
}

/* The running test binary's note, as the tool everyone trusts reads it from the file. */
static void test_build_id_self_is_readelfs(void **state)
{
	char hex[BUILD_ID_HEX_LEN], line[512], theirs[BUILD_ID_HEX_LEN] = "";
	FILE *f;

	(void)state;
	snprintf(line, sizeof(line), "readelf -n /proc/%d/exe 2>/dev/null", (int)getpid());
	f = popen(line, "r");
	if (!f)
		skip();
	while (fgets(line, sizeof(line), f))
		sscanf(line, " Build ID: %128[0-9a-f]", theirs);
	if (pclose(f) || !*theirs)
		skip(); /* no readelf (binutils) here */
	assert_int_equal(build_id_self(hex, sizeof(hex)), 0);
	assert_int_equal(strlen(hex), 40); /* configure links with --build-id=sha1 */
	assert_string_equal(hex, theirs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_build_id_notes),
	    cmocka_unit_test(test_build_id_self_is_readelfs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
