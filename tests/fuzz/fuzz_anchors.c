/*
 * tests/fuzz/fuzz_anchors.c: anchors.dat's reader (daemon/net/outbound.c,
 * net_anchors_decode), a file another program may have written. The input
 * is the file. Whatever it is: no crash, at most `max` entries; when it is
 * accepted, what was read encodes back to a file the reader accepts again
 * with the same entries (the checksum recomputed), and a file with its
 * checksum flipped is refused.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "addrman/addrman.h"
#include "daemon/net/net.h"

#define FA_MAGIC 0xdab5bffau /* regtest's, as the file starts */

static void check(int cond, const char *what)
{
	if (!cond) {
		fprintf(stderr, "fuzz_anchors: %s\n", what);
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct addrman_address v[2], again[2];
	uint32_t n = 0, m = 0;
	if (net_anchors_decode(data, size, FA_MAGIC, v, 2, &n) != 0)
		return 0;
	check(n <= 2, "more entries than asked for");
	uint8_t buf[512];
	size_t len = net_anchors_encode(v, n, FA_MAGIC, buf, sizeof(buf));
	check(len > 0, "what was read does not encode");
	check(net_anchors_decode(buf, len, FA_MAGIC, again, 2, &m) == 0, "re-encoded file refused");
	check(m == n, "re-encoded file has another count");
	for (uint32_t i = 0; i < n; i++) {
		check(addrman_service_eq(&v[i].svc, &again[i].svc), "address changed");
		check(v[i].services == again[i].services, "services changed");
		check((uint32_t)v[i].time == (uint32_t)again[i].time, "time changed");
	}
	buf[len - 1] ^= 1;
	check(net_anchors_decode(buf, len, FA_MAGIC, again, 2, &m) != 0, "bad checksum accepted");
	return 0;
}
