/*
 * index/internal.h: what index/'s files share and nobody else sees: the
 * LMDB handles of one index of a set, and the coinstats index's step.
 */
#ifndef PEERD_INDEX_INTERNAL_H
#define PEERD_INDEX_INTERNAL_H

#include <lmdb.h>

#include "index/index.h"

/** Index k's environment and database (*env NULL when k is not kept). */
void index_set_db(struct index_set *s, enum index_kind k, MDB_env **env, MDB_dbi *dbi);

/**
 * index/coinstats.c: take block n (decoded: b) into the coinstats index
 * inside write transaction t on database dbi: its record, from its
 * parent's and the block's outputs and undo data (Core's
 * CoinStatsIndex::CustomAppend). INDEX_OK, INDEX_ENOTFOUND (the parent's
 * record is missing), INDEX_ECHAIN, INDEX_EDB, INDEX_ECORRUPT, INDEX_ENOMEM.
 */
INDEX_WUR int index_coinstats_take(MDB_txn *t, MDB_dbi dbi, struct chain *c,
                                   const struct chain_node *n, const struct proto_block *b);

#endif
