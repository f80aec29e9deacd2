/*
 * chain/internal.h: what chain/'s files share and nobody else may use.
 */
#ifndef PEERD_CHAIN_INTERNAL_H
#define PEERD_CHAIN_INTERNAL_H

#include "chain/chain.h"

/*
 * chain_check_header for a header whose hash the caller has already
 * computed (chain_index_add_header needs it anyway: no second SHA-256d).
 */
CHAIN_WUR int chain_check_header_hashed(const struct proto_block_header *h,
                                        const struct proto_hash *hash, const struct proto_params *p,
                                        struct chain_state *st);

#endif
