/* SHA-256 against FIPS 180-2's examples, HMAC-SHA256 against RFC 4231, and util/rand. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/common.h"
#include "util/rand.h"
#include "util/sha256.h"

static void hex(const uint8_t *d, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", d[i]);
}

static void test_sha256_fips(void **state)
{
	static const struct {
		const char *msg;
		const char *digest;
	} v[] = {
		{"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
		{"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
		{"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
		 "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
	};
	uint8_t d[SHA256_LEN];
	char h[2 * SHA256_LEN + 1];
	struct sha256 s;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(v); i++) {
		sha256(v[i].msg, strlen(v[i].msg), d);
		hex(d, sizeof(d), h);
		assert_string_equal(h, v[i].digest);
	}
	/* one million 'a', fed in odd pieces so block boundaries fall everywhere */
	char *a = malloc(1000000);

	assert_non_null(a);
	memset(a, 'a', 1000000);
	sha256_init(&s);
	for (size_t off = 0, step = 1; off < 1000000; off += step, step = step % 97 + 1)
		sha256_update(&s, a + off, GS_MIN(step, 1000000 - off));
	sha256_final(&s, d);
	hex(d, sizeof(d), h);
	assert_string_equal(h, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	free(a);
}

static void test_hmac_rfc4231(void **state)
{
	uint8_t k20b[20], k20a[20], k25[25], k131[131], dd[50], cd[50], mac[SHA256_LEN];
	char h[2 * SHA256_LEN + 1];
	const struct {
		const void *key;
		size_t klen;
		const void *data;
		size_t dlen;
		const char *mac;
	} v[] = {
		{k20b, 20, "Hi There", 8,
		 "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"},
		{"Jefe", 4, "what do ya want for nothing?", 28,
		 "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"},
		{k20a, 20, dd, 50, "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"},
		{k25, 25, cd, 50, "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"},
		{k131, 131, "Test Using Larger Than Block-Size Key - Hash Key First", 54,
		 "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"},
		{k131, 131,
		 "This is a test using a larger than block-size key and a larger than block-size "
		 "data. The key needs to be hashed before being used by the HMAC algorithm.",
		 152, "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"},
	};

	(void)state;
	memset(k20b, 0x0b, sizeof(k20b));
	memset(k20a, 0xaa, sizeof(k20a));
	memset(k131, 0xaa, sizeof(k131));
	memset(dd, 0xdd, sizeof(dd));
	memset(cd, 0xcd, sizeof(cd));
	for (int i = 0; i < 25; i++)
		k25[i] = (uint8_t)(i + 1);
	for (size_t i = 0; i < ARRAY_SIZE(v); i++) {
		const void *parts[] = {v[i].data};
		size_t lens[] = {v[i].dlen};

		hmac_sha256(v[i].key, v[i].klen, parts, lens, 1, mac);
		hex(mac, sizeof(mac), h);
		assert_string_equal(h, v[i].mac);
	}
	/* the data may come in parts: the MAC is over their concatenation */
	const void *parts[] = {"what do ", "ya want", "", " for nothing?"};
	size_t lens[] = {8, 7, 0, 13};

	hmac_sha256("Jefe", 4, parts, lens, 4, mac);
	hex(mac, sizeof(mac), h);
	assert_string_equal(h, v[1].mac);
}

static void test_rand_and_ct(void **state)
{
	char a[65], b[65];
	uint64_t x = 0, y = 0;

	(void)state;
	assert_int_equal(rand_hex(a, sizeof(a), 32), 0);
	assert_int_equal(rand_hex(b, sizeof(b), 32), 0);
	assert_int_equal(strlen(a), 64);
	assert_int_equal(strspn(a, "0123456789abcdef"), 64);
	assert_string_not_equal(a, b);
	assert_int_equal(rand_hex(a, 64, 32), -EINVAL); /* no room for the NUL */
	assert_int_equal(rand_u64(&x), 0);
	assert_int_equal(rand_u64(&y), 0);
	assert_true(x != y);
	assert_true(mem_equal_ct("abcd", "abcd", 4));
	assert_false(mem_equal_ct("abcd", "abce", 4));
	assert_false(mem_equal_ct("xbcd", "abcd", 4));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sha256_fips),
		cmocka_unit_test(test_hmac_rfc4231),
		cmocka_unit_test(test_rand_and_ct),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
