/*
 * proto/frame.c: the 24-byte v1 frame header and command names.
 *
 *   magic u32le | command char[12], NUL-padded | length u32le | checksum[4]
 *
 * The header is checked before the receiver grows any buffer for the
 * payload (Core's V1Transport::readHeader): a wrong magic or an oversize
 * length must cost nothing. The checksum is the first four bytes of
 * SHA-256d(payload).
 */
#include "proto/proto.h"

/* Names padded to the wire's 12 bytes, so a parsed command field is
 * matched with one fixed-size memcmp per candidate and no strlen; one byte
 * more keeps the NUL of a name that fills all 12 (getcfcheckpt). */
static const char cmd_names[PROTO_CMD__COUNT][PROTO_COMMAND_SIZE + 1] = {[PROTO_CMD_UNKNOWN] = "",
#define NAME_(e, name, codec) [PROTO_CMD_##e] = name,
                                                                         PROTO_CMDS(NAME_)
#undef NAME_
};

/* Each name must fit the wire's 12 bytes (its NUL goes in the 13th). */
#define NAME_FITS_(e, name, codec)                                                                 \
	_Static_assert(sizeof(name) <= PROTO_COMMAND_SIZE + 1, "command name too long: " name);
PROTO_CMDS(NAME_FITS_)
#undef NAME_FITS_

const char *proto_cmd_name(enum proto_cmd cmd)
{
	/* The table entries are NUL-terminated in their 13th byte. */
	if ((unsigned)cmd >= PROTO_CMD__COUNT || cmd == PROTO_CMD_UNKNOWN)
		return "unknown";
	return cmd_names[cmd];
}

/* Look up a zero-padded 12-byte command field. */
static enum proto_cmd lookup_padded(const char field[PROTO_COMMAND_SIZE])
{
	if (!field[0])
		return PROTO_CMD_UNKNOWN;
	for (int i = 1; i < PROTO_CMD__COUNT; i++) {
		if (memcmp(cmd_names[i], field, PROTO_COMMAND_SIZE) == 0)
			return (enum proto_cmd)i;
	}
	return PROTO_CMD_UNKNOWN;
}

enum proto_cmd proto_cmd_lookup(const char *name)
{
	char field[PROTO_COMMAND_SIZE] = {0};
	size_t n = strnlen(name, PROTO_COMMAND_SIZE + 1);
	if (n > PROTO_COMMAND_SIZE)
		return PROTO_CMD_UNKNOWN;
	memcpy(field, name, n);
	return lookup_padded(field);
}

/* Core's IsMessageTypeValid: printable ASCII, then only NULs after the
 * first NUL. An all-NUL field is valid (and simply unknown). */
static bool command_valid(const uint8_t *c)
{
	size_t i = 0;
	for (; i < PROTO_COMMAND_SIZE && c[i]; i++) {
		if (c[i] < 0x20 || c[i] > 0x7e)
			return false;
	}
	for (; i < PROTO_COMMAND_SIZE; i++) {
		if (c[i])
			return false;
	}
	return true;
}

int proto_frame_header_parse(const uint8_t buf[PROTO_HEADER_SIZE], uint32_t magic,
                             struct proto_frame_header *h)
{
	h->magic = proto_le32(buf);
	memcpy(h->command, buf + 4, PROTO_COMMAND_SIZE);
	h->command[PROTO_COMMAND_SIZE] = 0;
	h->length = proto_le32(buf + 16);
	memcpy(h->checksum, buf + 20, 4);
	h->cmd = PROTO_CMD_UNKNOWN;

	if (h->magic != magic)
		return PROTO_EMAGIC;
	if (h->length > PROTO_MAX_MESSAGE)
		return PROTO_EOVERSIZE;
	if (!command_valid(buf + 4))
		return PROTO_ECOMMAND;
	h->cmd = lookup_padded(h->command);
	return 0;
}

void proto_checksum(const void *payload, size_t len, uint8_t out[4])
{
	uint8_t d[32];
	proto_sha256d(payload, len, d);
	memcpy(out, d, 4);
}

int proto_frame_verify(const struct proto_frame_header *h, const uint8_t *payload)
{
	uint8_t sum[4];
	proto_checksum(payload, h->length, sum);
	return memcmp(sum, h->checksum, 4) == 0 ? 0 : PROTO_ECHECKSUM;
}

/* Fill a header into out; 0 or the writer error to set. */
static int header_fill(uint8_t out[PROTO_HEADER_SIZE], uint32_t magic, const char *command,
                       const uint8_t *payload, size_t len)
{
	size_t n = strnlen(command, PROTO_COMMAND_SIZE + 1);
	if (n > PROTO_COMMAND_SIZE)
		return PROTO_ECOMMAND;
	if (len > PROTO_MAX_MESSAGE)
		return PROTO_EOVERSIZE;
	proto_put_le32(out, magic);
	memset(out + 4, 0, PROTO_COMMAND_SIZE);
	memcpy(out + 4, command, n);
	proto_put_le32(out + 16, (uint32_t)len);
	proto_checksum(payload, len, out + 20);
	return 0;
}

void proto_frame_write(struct proto_writer *w, uint32_t magic, const char *command,
                       const uint8_t *payload, size_t len)
{
	uint8_t hdr[PROTO_HEADER_SIZE];
	if (w->err)
		return;
	int err = header_fill(hdr, magic, command, payload, len);
	if (err) {
		w->err = err;
		return;
	}
	if (proto_writer_reserve(w, PROTO_HEADER_SIZE + len))
		return;
	proto_write_bytes(w, hdr, sizeof(hdr));
	proto_write_bytes(w, payload, len);
}

size_t proto_frame_begin(struct proto_writer *w)
{
	static const uint8_t zero[PROTO_HEADER_SIZE];
	size_t start = w->len;
	proto_write_bytes(w, zero, sizeof(zero));
	return start;
}

void proto_frame_end(struct proto_writer *w, size_t start, uint32_t magic, const char *command)
{
	if (w->err)
		return;
	if (start > w->len || w->len - start < PROTO_HEADER_SIZE) {
		/* Not a start this writer handed out: a caller bug, not input. */
		w->err = PROTO_EVALUE;
		return;
	}
	uint8_t *hdr = w->buf + start;
	size_t len = w->len - start - PROTO_HEADER_SIZE;
	int err = header_fill(hdr, magic, command, hdr + PROTO_HEADER_SIZE, len);
	if (err)
		w->err = err;
}
