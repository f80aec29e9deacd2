/**
 * proto/msg_cfilter.h: BIP157's messages, the compact block filters a
 * light client asks a full node for: getcfilters/cfilter,
 * getcfheaders/cfheaders and getcfcheckpt/cfcheckpt.
 *
 * Part of proto/proto.h, the module's one public face: include that,
 * not this file. Split out only to keep each file about one thing.
 *
 * Layouts (Core's protocol.h and blockfilter.h):
 *   getcfilters, getcfheaders  type u8 | start height u32le | stop hash[32]
 *   getcfcheckpt               type u8 | stop hash[32]
 *   cfilter                    type u8 | block hash[32] | filter (CompactSize length, bytes)
 *   cfheaders                  type u8 | stop hash[32] | previous filter header[32] |
 *                              count CompactSize | count * filter hash[32]
 *   cfcheckpt                  type u8 | stop hash[32] | count CompactSize | count * header[32]
 *
 * The requests are fixed-size. The answers' counts are checked against
 * the bytes left (and cfheaders' against Core's 2,000) before anything is
 * allocated; the codec keeps any filter type as received: the handler
 * judges it (Core disconnects a peer asking for a type it does not serve).
 */
#ifndef PEERD_PROTO_MSG_CFILTER_H
#define PEERD_PROTO_MSG_CFILTER_H

#ifndef PEERD_PROTO_H
#error "include proto/proto.h, not proto/msg_cfilter.h"
#endif

/** BIP158's basic filter type (Core's BlockFilterType::BASIC). */
#define PROTO_FILTER_BASIC 0u
/** Filters one getcfilters may ask for (Core's MAX_GETCFILTERS_SIZE). */
#define PROTO_MAX_GETCFILTERS 1000u
/** Filter hashes one getcfheaders may ask for (Core's MAX_GETCFHEADERS_SIZE). */
#define PROTO_MAX_GETCFHEADERS 2000u
/** Blocks between two cfcheckpt headers (Core's CFCHECKPT_INTERVAL). */
#define PROTO_CFCHECKPT_INTERVAL 1000u
/** Headers a cfcheckpt may hold: as many as fit a message. */
#define PROTO_MAX_CFCHECKPT (PROTO_MAX_MESSAGE / 32u)

/** getcfilters and getcfheaders (one wire format). */
struct proto_getcfilters {
	uint8_t filter_type;   /**< any value as received */
	uint32_t start_height; /**< the first block wanted, by height */
	struct proto_hash stop_hash;
};

/** getcfcheckpt. */
struct proto_getcfcheckpt {
	uint8_t filter_type; /**< any value as received */
	struct proto_hash stop_hash;
};

/** cfilter: one block's filter. Storage reused across decodes. */
struct proto_cfilter {
	uint8_t filter_type;
	struct proto_hash block_hash;
	uint8_t *filter; /**< len bytes (owned; proto_cfilter_release) */
	uint32_t len;
	uint32_t cap; /**< bytes filter holds without growing */
};

/** cfheaders and cfcheckpt: a list of 32-byte hashes. Storage reused across decodes. */
struct proto_cfhashes {
	uint8_t filter_type;
	struct proto_hash stop_hash;
	struct proto_hash prev_header; /**< cfheaders only: the header before the first hash */
	struct proto_hash *hashes;     /**< n hashes (owned; proto_cfhashes_release) */
	uint32_t n;
	uint32_t cap; /**< hashes the array holds without growing */
};

/** getcfilters/getcfheaders: 37 bytes; 0 or PROTO_ETRUNC. */
PROTO_WUR int proto_getcfilters_decode(struct proto_reader *r, struct proto_getcfilters *g);
/** getcfilters/getcfheaders; errors in w->err. */
void proto_getcfilters_encode(const struct proto_getcfilters *g, struct proto_writer *w);
/** getcfcheckpt: 33 bytes; 0 or PROTO_ETRUNC. */
PROTO_WUR int proto_getcfcheckpt_decode(struct proto_reader *r, struct proto_getcfcheckpt *g);
/** getcfcheckpt; errors in w->err. */
void proto_getcfcheckpt_encode(const struct proto_getcfcheckpt *g, struct proto_writer *w);

/**
 * cfilter: the filter's length is checked against the bytes left before
 * it is copied (PROTO_ETRUNC). PROTO_ENOMEM when storage cannot grow.
 */
PROTO_WUR int proto_cfilter_decode(struct proto_reader *r, struct proto_cfilter *f);
/** cfilter; errors in w->err. */
void proto_cfilter_encode(const struct proto_cfilter *f, struct proto_writer *w);
/** Free the filter bytes; f is then empty and reusable. */
void proto_cfilter_release(struct proto_cfilter *f);

/**
 * cfheaders: at most PROTO_MAX_GETCFHEADERS hashes (PROTO_ECOUNT), and no
 * more than the bytes left hold (PROTO_ETRUNC).
 */
PROTO_WUR int proto_cfheaders_decode(struct proto_reader *r, struct proto_cfhashes *h);
/** cfheaders; errors in w->err. */
void proto_cfheaders_encode(const struct proto_cfhashes *h, struct proto_writer *w);
/** cfcheckpt: at most PROTO_MAX_CFCHECKPT headers; prev_header is left zero. */
PROTO_WUR int proto_cfcheckpt_decode(struct proto_reader *r, struct proto_cfhashes *h);
/** cfcheckpt (prev_header is not written); errors in w->err. */
void proto_cfcheckpt_encode(const struct proto_cfhashes *h, struct proto_writer *w);
/** Room for n hashes, the first h->n kept. 0 or PROTO_ENOMEM. */
PROTO_WUR int proto_cfhashes_reserve(struct proto_cfhashes *h, uint32_t n);
/** Free the hashes; h is then empty and reusable. */
void proto_cfhashes_release(struct proto_cfhashes *h);

#endif
