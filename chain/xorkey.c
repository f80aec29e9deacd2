/*
 * chain/xorkey.c: Bitcoin Core 28+'s obfuscated block files: blocks/xor.dat
 * holds an 8-byte key, and every byte of every blk and rev file is stored
 * XORed with the key byte its file offset selects (Core's util::Xor over
 * AutoFile positions), headers and padding-free records alike. A zero key
 * is the plain format older Core and peerd wrote.
 *
 * The key is chosen once, as Core's InitBlocksdirXorKey: a blocks
 * directory holding nothing but hidden files (the first start) gets a
 * random key unless -blocksxor=0; any other directory without xor.dat
 * (written before obfuscation existed) gets a zero key, so its files stay
 * readable. A stored key always wins, and -blocksxor=0 with a non-zero
 * stored key is Core's startup error, since the files cannot be read
 * without it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "chain/internal.h"

void chain_xor(uint8_t *buf, size_t len, const uint8_t key[CHAIN_XOR_KEY_SIZE], uint64_t off)
{
	/* The key turned so that its byte 0 applies to buf[0]; then whole
	 * words, which the compiler turns into wide XORs. */
	uint8_t k[CHAIN_XOR_KEY_SIZE];
	for (size_t j = 0; j < CHAIN_XOR_KEY_SIZE; j++)
		k[j] = key[(off + j) % CHAIN_XOR_KEY_SIZE];
	uint64_t kw;
	memcpy(&kw, k, sizeof(kw));
	if (!kw)
		return;
	/* 64 bytes a round in four 16-byte vectors (SSE2 on any x86-64, NEON
	 * on arm64): a block served from an obfuscated file costs about a
	 * third of its read, not more. */
	typedef uint64_t xor_v2 __attribute__((vector_size(16)));
	xor_v2 kv = {kw, kw};
	size_t i = 0;
	for (; i + 64 <= len; i += 64) {
		xor_v2 v[4];
		memcpy(v, buf + i, sizeof(v));
		v[0] ^= kv;
		v[1] ^= kv;
		v[2] ^= kv;
		v[3] ^= kv;
		memcpy(buf + i, v, sizeof(v));
	}
	for (; i + 8 <= len; i += 8) {
		uint64_t w;
		memcpy(&w, buf + i, sizeof(w));
		w ^= kw;
		memcpy(buf + i, &w, sizeof(w));
	}
	for (; i < len; i++)
		buf[i] ^= k[i % CHAIN_XOR_KEY_SIZE];
}

bool chain_xor_key_is_zero(const uint8_t key[CHAIN_XOR_KEY_SIZE])
{
	uint8_t acc = 0;
	for (size_t i = 0; i < CHAIN_XOR_KEY_SIZE; i++)
		acc |= key[i];
	return acc == 0;
}

/* Core's first-run test: the directory holds only hidden regular files
 * (a .lock may already be there). 0 with *first set, or CHAIN_EIO. */
static int first_run(const char *dir, bool *first)
{
	DIR *d = opendir(dir);
	if (!d)
		return errno == ENOENT ? (*first = true, 0) : CHAIN_EIO;
	*first = true;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (e->d_name[0] != '.' || (e->d_type != DT_REG && e->d_type != DT_UNKNOWN)) {
			*first = false;
			break;
		}
	}
	closedir(d);
	return 0;
}

int chain_xor_key_read(const char *blocks_dir, uint8_t key[CHAIN_XOR_KEY_SIZE])
{
	memset(key, 0, CHAIN_XOR_KEY_SIZE);
	char path[4096];
	if ((size_t)snprintf(path, sizeof(path), "%s/xor.dat", blocks_dir) >= sizeof(path))
		return CHAIN_EARG;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? CHAIN_ENOTFOUND : CHAIN_EIO;
	/* Core reads exactly 8 bytes: a shorter file is an error there too. */
	ssize_t n = read(fd, key, CHAIN_XOR_KEY_SIZE);
	close(fd);
	if (n != CHAIN_XOR_KEY_SIZE) {
		memset(key, 0, CHAIN_XOR_KEY_SIZE);
		return CHAIN_ECORRUPT;
	}
	return 0;
}

/* Create xor.dat with the key; it must not exist yet (Core's "wbx"). */
static int write_key(const char *blocks_dir, const uint8_t key[CHAIN_XOR_KEY_SIZE])
{
	char path[4096];
	if ((size_t)snprintf(path, sizeof(path), "%s/xor.dat", blocks_dir) >= sizeof(path))
		return CHAIN_EARG;
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return CHAIN_EIO;
	int rc = 0;
	if (write(fd, key, CHAIN_XOR_KEY_SIZE) != CHAIN_XOR_KEY_SIZE || fsync(fd))
		rc = CHAIN_EIO;
	if (close(fd))
		rc = CHAIN_EIO;
	return rc;
}

int chain_xor_key_init(const char *blocks_dir, bool use_xor, uint8_t key[CHAIN_XOR_KEY_SIZE],
                       char *msg, size_t cap)
{
	msg[0] = '\0';
	bool first;
	int rc = first_run(blocks_dir, &first);
	if (rc) {
		snprintf(msg, cap, "cannot read the blocks directory %s: %s", blocks_dir,
		         strerror(errno));
		return rc;
	}
	rc = chain_xor_key_read(blocks_dir, key);
	if (rc == CHAIN_ENOTFOUND) {
		memset(key, 0, CHAIN_XOR_KEY_SIZE);
		if (use_xor && first)
			proto_random(key, CHAIN_XOR_KEY_SIZE);
		if ((rc = write_key(blocks_dir, key)))
			snprintf(msg, cap, "Error writing XOR key file %s/xor.dat: %s", blocks_dir,
			         strerror(errno));
	} else if (rc) {
		snprintf(msg, cap, "cannot read the XOR key file %s/xor.dat: %s", blocks_dir,
		         rc == CHAIN_ECORRUPT ? "shorter than 8 bytes" : strerror(errno));
	}
	if (rc)
		return rc;
	if (!use_xor && !chain_xor_key_is_zero(key)) {
		/* Core's text, as its init prints it. */
		char hex[2 * CHAIN_XOR_KEY_SIZE + 1];
		for (size_t i = 0; i < CHAIN_XOR_KEY_SIZE; i++)
			snprintf(hex + 2 * i, 3, "%02x", key[i]);
		snprintf(msg, cap,
		         "Failed to initialize ChainstateManager: The blocksdir XOR-key can not be "
		         "disabled when a random key was already stored! Stored key: '%s', stored "
		         "path: '%s/xor.dat'.",
		         hex, blocks_dir);
		return CHAIN_EARG;
	}
	return 0;
}
