/*
 * chain/connect.c: Core's ConnectBlock and DisconnectBlock.
 *
 * A block is connected into a block view (view.c) over the coins cache,
 * so a block that breaks a rule leaves the cache untouched; only when
 * every check passed is the view applied. Each input's script check
 * becomes one job: a plain struct whose spent scriptPubKey lives inline
 * when it is at most 28 bytes (pool_sbuf, Core's prevector<28>) and in the
 * job vector's arena beyond (no allocation per job: the queue holds the
 * arena's chunks until the round completes), valid after memcpy, so the
 * job vector grows by realloc and the queue takes it without copying. Jobs go to the queue in
 * batches of CHAIN_JOB_HANDOFF once their transactions' other checks pass, so the workers verify
 * signatures while this thread looks up the next transactions' coins; at
 * the end this thread works through the rest with them
 * (pool_queue_complete).
 *
 * Verdict precedence is Core 29's: with workers, the loop keeps going
 * past transactions whose scripts are still being checked, so a later
 * rule failure (or bad-cb-amount) is what is reported and a script
 * failure only when nothing else failed; without workers (par=1) scripts
 * run in place and the first failing transaction is reported.
 */
#include <stdio.h>
#include <string.h>

#include "chain/internal.h"
#include "pool/pool.h"
#include "script/script.h"

/* One script check: everything a worker needs, nothing pointing into itself. */
struct check_job {
	const struct proto_tx *tx; /* in the block being connected */
	const struct script_precomputed *pre;
	int64_t amount;
	uint32_t in;
	uint32_t tx_index;
	struct pool_sbuf spk; /* the spent output's script: inline up to 28 bytes, else borrowed
	                         from the job vector's arena; owns nothing */
};

/*
 * Jobs handed to the queue at once. One hand-over per transaction (Core's
 * control.Add per tx) takes the queue's lock and wakes a worker a thousand
 * times for a block of 1,000 small transactions; batches of this many keep
 * the workers fed (a batch is milliseconds of signature checks) while this
 * thread's share of the work stays small.
 */
#define CHAIN_JOB_HANDOFF 64u
/*
 * A block's first jobs go over sooner: until then the workers have
 * nothing to do, and in a block of a few dozen inputs (IBD's usual) the
 * first 64 would leave them idle for most of this thread's pass.
 */
#define CHAIN_JOB_FIRST_HANDOFF 8u
/*
 * Most jobs a thread takes at once. A script check is tens of
 * microseconds of signature work and a take is a lock round trip of well
 * under one, so small batches cost nothing, while the pool's default (128,
 * Core's, sized for cheap jobs) lets one thread carry off a block's last
 * milliseconds of work as the others run dry.
 */
#define CHAIN_JOB_BATCH 16u

struct check_round {
	uint32_t flags;
};

struct chain_checker {
	struct pool_queue *q; /* NULL with par=1: checks run in place */
	struct pool_vec jobs;
	struct chain_view view;
	/* per-block and per-transaction scratch, kept between blocks */
	struct script_precomputed *pre;
	size_t pre_cap;
	struct script_spent_output *spent;
	struct chain_view_entry **prev;
	int32_t *prev_heights;
	struct chain_coin *coins; /* the spent coins, for the checks shared with the mempool */
	size_t in_cap;
	struct chain_script_cache *sc; /* may be NULL */
	bool handed;                   /* this round's first jobs went to the queue */
	bool skip_scripts; /* the next chain_connect_block skips scripts (assumevalid) */
};

/* The failure code carries the transaction so the log can name it. */
static int job_code(uint32_t tx_index, int script_err)
{
	return (int)((tx_index + 1) << 8) | script_err;
}

static int job_run(void *job, void *arg)
{
	const struct check_job *j = job;
	const struct check_round *r = arg;
	struct script_spent_output so = {
	    .amount = j->amount,
	    .script = pool_sbuf_data(&j->spk),
	    .script_len = (uint32_t)pool_sbuf_len(&j->spk),
	};
	int err = SCRIPT_ERR_OK;
	if (script_verify_input(j->tx, j->in, &so, r->flags, j->pre, &err) == 0)
		return 0;
	return job_code(j->tx_index, err ? err : SCRIPT_ERR_UNKNOWN_ERROR);
}

int chain_checker_new(struct chain_checker **out, int par)
{
	if (par > POOL_MAX_THREADS || par < -POOL_MAX_THREADS)
		return CHAIN_EARG;
	struct chain_checker *ck = xcalloc(1, sizeof(*ck));
	if (!ck)
		return CHAIN_ENOMEM;
	pool_vec_init(&ck->jobs, sizeof(struct check_job));
	chain_view_init(&ck->view, NULL);
	if (par != 1) {
		struct pool_queue_config cfg = {
		    .job_size = sizeof(struct check_job),
		    .run = job_run,
		    .release = NULL, /* a job owns nothing (its script is inline or in the arena) */
		    /* bitcoind's -par counts the validating thread; the pool's does not */
		    .par = par > 1 ? par - 1 : par,
		    .batch = CHAIN_JOB_BATCH,
		};
		int err = pool_queue_new(&ck->q, &cfg);
		if (err) {
			xfree(ck);
			return err == POOL_ENOMEM ? CHAIN_ENOMEM : CHAIN_EARG;
		}
		/* With no workers to share it, a queue only adds cost. */
		if (pool_queue_workers(ck->q) == 0) {
			pool_queue_free(ck->q);
			ck->q = NULL;
		}
	}
	*out = ck;
	return 0;
}

void chain_checker_free(struct chain_checker *ck)
{
	if (!ck)
		return;
	pool_queue_free(ck->q);
	pool_vec_release(&ck->jobs, NULL, NULL);
	chain_view_release(&ck->view);
	xfree(ck->pre);
	xfree(ck->spent);
	xfree(ck->prev);
	xfree(ck->prev_heights);
	xfree(ck->coins);
	chain_script_cache_free(ck->sc);
	xfree(ck);
}

void chain_checker_skip_scripts(struct chain_checker *ck, bool skip)
{
	ck->skip_scripts = skip;
}

unsigned chain_checker_workers(const struct chain_checker *ck)
{
	return ck->q ? pool_queue_workers(ck->q) : 0;
}

void chain_checker_stats(struct chain_checker *ck, struct pool_queue_stats *out)
{
	if (ck->q) {
		pool_queue_stats(ck->q, out);
		return;
	}
	memset(out, 0, sizeof(*out));
	out->threads = 1;
}

static int reserve_scratch(struct chain_checker *ck, size_t n_tx, size_t max_in)
{
	if (n_tx > ck->pre_cap) {
		struct script_precomputed *p = xreallocarray(ck->pre, n_tx, sizeof(*p));
		if (!p)
			return CHAIN_ENOMEM;
		ck->pre = p;
		ck->pre_cap = n_tx;
	}
	if (max_in > ck->in_cap) {
		struct script_spent_output *s = xreallocarray(ck->spent, max_in, sizeof(*s));
		if (!s)
			return CHAIN_ENOMEM;
		ck->spent = s;
		struct chain_view_entry **pv = xreallocarray(ck->prev, max_in, sizeof(*pv));
		if (!pv)
			return CHAIN_ENOMEM;
		ck->prev = pv;
		int32_t *h = xreallocarray(ck->prev_heights, max_in, sizeof(*h));
		if (!h)
			return CHAIN_ENOMEM;
		ck->prev_heights = h;
		struct chain_coin *cc = xreallocarray(ck->coins, max_in, sizeof(*cc));
		if (!cc)
			return CHAIN_ENOMEM;
		ck->coins = cc;
		ck->in_cap = max_in;
	}
	return 0;
}

/* ---- the two special cases of BIP30 ------------------------------------ */

struct hash_at {
	enum proto_net net;
	int32_t height;
	const char *hash; /* display order */
};

/* Core's IsBIP30Repeat: coinbases that repeat an earlier block's. */
static const struct hash_at BIP30_REPEATS[] = {
    {PROTO_NET_MAIN, 91842, "00000000000a4d0a398161ffc163c503763b1f4360639393e0e4c8e300e0caec"},
    {PROTO_NET_MAIN, 91880, "00000000000743f190a18c5577a3c2d2a1f610ae9601ac046a38084ccb7cd721"},
};

/* Core's BIP34Hash: the block at bip34_height whose presence lets BIP34
 * stand in for BIP30. The other networks set none, so BIP30 is always
 * checked there. */
static const struct hash_at BIP34_HASHES[] = {
    {PROTO_NET_MAIN, 227931, "000000000000024b89b42a942fe0d9fea3bb44ab7bd1b19115dd6a759c0808b8"},
    {PROTO_NET_TESTNET3, 21111, "0000000023b3a96d3484e5abb3755c413e7d41500f8e2a5c3f0dd01299cd8ef8"},
};

static bool node_is(const struct chain_node *n, const struct hash_at *tab, size_t count,
                    enum proto_net net)
{
	char hex[65];
	proto_hash_to_hex(&n->hash, hex);
	for (size_t i = 0; i < count; i++) {
		if (tab[i].net == net && tab[i].height == n->height && !strcmp(tab[i].hash, hex))
			return true;
	}
	return false;
}

bool chain_is_bip30_repeat(const struct proto_params *p, const struct chain_node *node)
{
	return node_is(node, BIP30_REPEATS, sizeof(BIP30_REPEATS) / sizeof(BIP30_REPEATS[0]),
	               p->net);
}

static bool enforce_bip30(const struct proto_params *p, const struct chain_node *node)
{
	if (node->height >= CHAIN_BIP34_IMPLIES_BIP30_LIMIT)
		return true;
	if (chain_is_bip30_repeat(p, node))
		return false;
	const struct chain_node *b34 =
	    chain_node_ancestor((struct chain_node *)node->prev, p->bip34_height);
	return !(b34 && node_is(b34, BIP34_HASHES, sizeof(BIP34_HASHES) / sizeof(BIP34_HASHES[0]),
	                        p->net));
}

static int check_bip30(struct chain_coins *coins, struct proto_block *b, struct chain_state *st)
{
	for (uint32_t i = 0; i < b->n_tx; i++) {
		struct proto_tx *tx = &b->txs[i];
		struct proto_outpoint op = {.txid = *proto_tx_txid(tx)};
		for (op.n = 0; op.n < tx->n_out; op.n++) {
			struct chain_coin c;
			int err = chain_coins_get(coins, &op, &c);
			if (err == 0)
				return chain_reject(st, CHAIN_RESULT_CONSENSUS, "bad-txns-BIP30",
				                    "tried to overwrite transaction");
			if (err != CHAIN_ENOTFOUND)
				return err;
		}
	}
	return 0;
}

/* ---- per-transaction rules ---------------------------------------------- */

static bool money_range(int64_t v)
{
	return v >= 0 && v <= PROTO_MAX_MONEY;
}

static void txid_hex(struct proto_tx *tx, char out[65])
{
	proto_hash_to_hex(proto_tx_txid(tx), out);
}

/*
 * Core's Consensus::CheckTxInputs with the block's view; ck->prev[] gets
 * each input's coin. Returns 0 with *fee set, CHAIN_EINVALID or a fatal
 * error from the cache.
 */
static int check_tx_inputs(struct chain_checker *ck, struct proto_tx *tx, int32_t spend_height,
                           int64_t *fee, struct chain_state *st)
{
	char hex[65];
	/* Core's HaveInputs first: a missing input wins over any other rule. */
	for (uint32_t j = 0; j < tx->n_in; j++) {
		int err = chain_view_fetch(&ck->view, &tx->vin[j].prevout, &ck->prev[j]);
		if (err == CHAIN_ENOTFOUND) {
			txid_hex(tx, hex);
			return chain_reject(
			    st, CHAIN_RESULT_CONSENSUS, "bad-txns-inputs-missingorspent",
			    "CheckTxInputs: inputs missing/spent in transaction %s", hex);
		}
		if (err)
			return err;
	}
	for (uint32_t j = 0; j < tx->n_in; j++) {
		const struct chain_view_entry *c = ck->prev[j];
		ck->coins[j] = (struct chain_coin){
		    .value = c->value,
		    .height = c->height,
		    .coinbase = c->coinbase,
		    .script_len = c->script_len,
		    .script = c->script,
		};
	}
	int err = chain_check_tx_input_values(tx, ck->coins, spend_height, fee, st);
	/* Core's ConnectBlock names the transaction after CheckTxInputs' words. */
	if (err == CHAIN_EINVALID && st) {
		size_t n = strlen(st->debug);
		txid_hex(tx, hex);
		snprintf(st->debug + n, sizeof(st->debug) - n, " in transaction %s", hex);
	}
	return err;
}

int chain_check_tx_input_values(struct proto_tx *tx, const struct chain_coin *prev,
                                int32_t spend_height, int64_t *fee, struct chain_state *st)
{
	int64_t in = 0;
	for (uint32_t j = 0; j < tx->n_in; j++) {
		const struct chain_coin *c = &prev[j];
		if (c->coinbase && spend_height - (int64_t)c->height < CHAIN_COINBASE_MATURITY)
			return chain_reject(st, CHAIN_RESULT_CONSENSUS,
			                    "bad-txns-premature-spend-of-coinbase",
			                    "tried to spend coinbase at depth %lld",
			                    (long long)(spend_height - (int64_t)c->height));
		in += c->value; /* both at most MAX_MONEY: cannot overflow */
		if (!money_range(c->value) || !money_range(in))
			return chain_reject(st, CHAIN_RESULT_CONSENSUS,
			                    "bad-txns-inputvalues-outofrange", NULL);
	}
	/* CheckTransaction bounded every output and the sum by MAX_MONEY. */
	int64_t out = 0;
	for (uint32_t k = 0; k < tx->n_out; k++)
		out += tx->vout[k].value;
	if (in < out) {
		char a[PROTO_MONEY_STRLEN], b[PROTO_MONEY_STRLEN];
		proto_format_money(in, a);
		proto_format_money(out, b);
		return chain_reject(st, CHAIN_RESULT_CONSENSUS, "bad-txns-in-belowout",
		                    "value in (%s) < value out (%s)", a, b);
	}
	if (!money_range(in - out))
		return chain_reject(st, CHAIN_RESULT_CONSENSUS, "bad-txns-fee-outofrange", NULL);
	*fee = in - out;
	return 0;
}

/* Core's GetTransactionSigOpCost with the spent coins in ck->prev: the
 * same sum as chain_tx_sigop_cost, over the block's view entries. */
static uint32_t tx_sigop_cost(const struct chain_checker *ck, const struct proto_tx *tx,
                              uint32_t flags)
{
	uint32_t cost = chain_tx_legacy_sigops(tx) * PROTO_WITNESS_SCALE;
	if (proto_tx_is_coinbase(tx))
		return cost;
	for (uint32_t j = 0; j < tx->n_in; j++)
		cost += chain_input_sigop_cost(tx, j, ck->prev[j]->script, ck->prev[j]->script_len,
		                               flags);
	return cost;
}

static int reject_script(struct chain_state *st, struct proto_block *b, int code)
{
	int err = code & 0xff;
	uint32_t tx_index = ((uint32_t)code >> 8) - 1;
	char reason[CHAIN_REASON_MAX], hex[65] = "?";
	snprintf(reason, sizeof(reason), CHAIN_SCRIPT_REASON_PREFIX "%s)",
	         script_error_core_string(err));
	if (tx_index < b->n_tx)
		txid_hex(&b->txs[tx_index], hex);
	return chain_reject(st, CHAIN_RESULT_CONSENSUS, reason, "script check failed in tx %s: %s",
	                    hex, script_error_name(err));
}

/*
 * The script checks of transaction i: queued with workers, else run here
 * (returning the failure code of the first input that fails).
 */
static int add_script_checks(struct chain_checker *ck, struct proto_block *b, uint32_t i,
                             uint32_t flags, int *inline_verdict)
{
	struct proto_tx *tx = &b->txs[i];
	for (uint32_t j = 0; j < tx->n_in; j++) {
		const struct chain_view_entry *c = ck->prev[j];
		if (!ck->q) {
			int err = SCRIPT_ERR_OK;
			if (script_verify_input(tx, j, &ck->spent[j], flags, &ck->pre[i], &err)) {
				*inline_verdict = job_code(i, err ? err : SCRIPT_ERR_UNKNOWN_ERROR);
				return 0;
			}
			continue;
		}
		struct check_job *job = pool_vec_emplace(&ck->jobs);
		if (!job)
			return CHAIN_ENOMEM;
		job->tx = tx;
		job->pre = &ck->pre[i];
		job->amount = c->value;
		job->in = j;
		job->tx_index = i;
		if (pool_sbuf_init_in(&job->spk, &ck->jobs, c->script, c->script_len)) {
			ck->jobs.len--; /* the slot holds nothing to release */
			return CHAIN_ENOMEM;
		}
	}
	if (ck->q && ck->jobs.len >= (ck->handed ? CHAIN_JOB_HANDOFF : CHAIN_JOB_FIRST_HANDOFF)) {
		ck->handed = true;
		if (pool_queue_take_vec(ck->q, &ck->jobs))
			return CHAIN_ENOMEM;
	}
	return 0;
}

/* Copy the coins transaction i spent into the undo data. */
static int record_undo(struct chain_checker *ck, const struct proto_tx *tx, uint32_t i,
                       struct chain_block_undo *u, uint32_t *next)
{
	u->first[i - 1] = *next;
	u->n_coins[i - 1] = tx->n_in;
	for (uint32_t j = 0; j < tx->n_in; j++) {
		const struct chain_view_entry *c = ck->prev[j];
		struct chain_undo_coin *uc = &u->coins[(*next)++];
		uc->value = c->value;
		uc->height = c->height;
		uc->coinbase = c->coinbase;
		uc->script_len = c->script_len;
		uc->script = xmalloc(c->script_len);
		if (!uc->script) {
			uc->script_len = 0;
			return CHAIN_ENOMEM;
		}
		memcpy(uc->script, c->script, c->script_len);
		u->total = *next;
	}
	return 0;
}

static int alloc_undo(struct chain_block_undo *u, uint32_t n_tx, uint32_t n_inputs)
{
	uint32_t n = n_tx ? n_tx - 1 : 0;
	u->first = xcalloc(n ? n : 1, sizeof(*u->first));
	u->n_coins = xcalloc(n ? n : 1, sizeof(*u->n_coins));
	u->coins = xcalloc(n_inputs ? n_inputs : 1, sizeof(*u->coins));
	if (!u->first || !u->n_coins || !u->coins)
		return CHAIN_ENOMEM;
	u->n_tx = n;
	u->total = 0;
	return 0;
}

/* The block's one pass over its transactions; see chain_connect_block. */
struct connect_pass {
	struct chain_checker *ck;
	struct proto_block *b;
	const struct chain_node *node;
	uint32_t flags;
	bool enforce_bip68;
	struct chain_block_undo *undo;
	struct chain_connect_info *info;
	struct chain_state *st;
	int inline_verdict;
	bool skip_scripts; /* assumevalid: Core's fScriptChecks false */
};

static int connect_tx(struct connect_pass *cp, uint32_t i, uint32_t *undo_next)
{
	struct chain_checker *ck = cp->ck;
	struct proto_tx *tx = &cp->b->txs[i];
	int err;
	bool coinbase = i == 0;
	if (!coinbase) {
		int64_t fee = 0;
		err = check_tx_inputs(ck, tx, cp->node->height, &fee, cp->st);
		if (err)
			return err;
		cp->info->fees += fee;
		if (!money_range(cp->info->fees))
			return chain_reject(cp->st, CHAIN_RESULT_CONSENSUS,
			                    "bad-txns-accumulated-fee-outofrange",
			                    "accumulated fee in the block out of range");
		for (uint32_t j = 0; j < tx->n_in; j++)
			ck->prev_heights[j] = (int32_t)ck->prev[j]->height;
		if (!chain_tx_sequence_locks_ok(tx, cp->enforce_bip68, ck->prev_heights,
		                                cp->node->prev))
			return chain_reject(cp->st, CHAIN_RESULT_CONSENSUS, "bad-txns-nonfinal",
			                    "contains a non-BIP68-final transaction");
	}
	cp->info->sigops += tx_sigop_cost(ck, tx, cp->flags);
	if (cp->info->sigops > CHAIN_MAX_BLOCK_SIGOPS_COST)
		return chain_reject(cp->st, CHAIN_RESULT_CONSENSUS, "bad-blk-sigops",
		                    "too many sigops");
	/* A transaction the mempool verified under these flags needs no
	 * script checks (Core's script-execution cache); a real connect
	 * uses the entry up. Under assumevalid Core does not look: neither
	 * does this, so the entry stays for whoever asks next. */
	bool cached = !coinbase && (cp->skip_scripts ||
	                            (ck->sc && !chain_script_cache_is_empty(ck->sc) &&
	                             chain_script_cache_has(ck->sc, proto_tx_wtxid(tx), cp->flags,
	                                                    cp->undo != NULL, cp->undo != NULL)));
	if (!coinbase && cached) {
		cp->info->inputs += tx->n_in;
		if (cp->undo && (err = record_undo(ck, tx, i, cp->undo, undo_next)))
			return err;
		for (uint32_t j = 0; j < tx->n_in; j++)
			ck->prev[j]->spent = true;
	} else if (!coinbase) {
		for (uint32_t j = 0; j < tx->n_in; j++) {
			ck->spent[j].amount = ck->prev[j]->value;
			ck->spent[j].script = ck->prev[j]->script;
			ck->spent[j].script_len = ck->prev[j]->script_len;
		}
		script_precompute(&ck->pre[i], tx, ck->spent, false);
		cp->info->inputs += tx->n_in;
		cp->info->jobs += tx->n_in;
		err = add_script_checks(ck, cp->b, i, cp->flags, &cp->inline_verdict);
		if (err)
			return err;
		if (cp->inline_verdict)
			return reject_script(cp->st, cp->b, cp->inline_verdict);
		if (cp->undo && (err = record_undo(ck, tx, i, cp->undo, undo_next)))
			return err;
		for (uint32_t j = 0; j < tx->n_in; j++)
			ck->prev[j]->spent = true;
	}
	struct proto_outpoint op = {.txid = *proto_tx_txid(tx)};
	for (op.n = 0; op.n < tx->n_out; op.n++) {
		const struct proto_txout *o = &tx->vout[op.n];
		err = chain_view_create(&ck->view, &op, o->value, proto_txout_script(tx, o),
		                        o->script_len, (uint32_t)cp->node->height, coinbase);
		if (err)
			return err;
	}
	return 0;
}

int chain_connect_block(struct chain_coins *coins, struct chain_checker *ck, struct proto_block *b,
                        const struct chain_node *node, const struct proto_params *p,
                        bool just_check, struct chain_block_undo *undo,
                        struct chain_connect_info *info, struct chain_state *st)
{
	struct chain_connect_info dummy;
	if (!info)
		info = &dummy;
	memset(info, 0, sizeof(*info));
	/* Core never adds the genesis coinbase: its output cannot be spent. */
	if (proto_hash_eq(&node->hash, &p->genesis_hash)) {
		if (!just_check)
			chain_coins_set_best_block(coins, &node->hash);
		return 0;
	}
	/* The choice is for this call only, whatever it returns. */
	bool skip_scripts = ck->skip_scripts;
	ck->skip_scripts = false;
	if (!node->prev || b->n_tx == 0 || (!just_check && !undo))
		return CHAIN_EARG;
	int err = 0;
	if (enforce_bip30(p, node) && (err = check_bip30(coins, b, st)))
		return err;

	size_t n_in = 0, n_out = 0, max_in = 0;
	for (uint32_t i = 0; i < b->n_tx; i++) {
		n_in += b->txs[i].n_in;
		n_out += b->txs[i].n_out;
		if (b->txs[i].n_in > max_in)
			max_in = b->txs[i].n_in;
	}
	ck->view.base = coins;
	chain_view_reset(&ck->view);
	if ((err = reserve_scratch(ck, b->n_tx, max_in)) ||
	    (err = chain_view_reserve(&ck->view, n_in + n_out)))
		return err;
	if (undo && !just_check && (err = alloc_undo(undo, b->n_tx, (uint32_t)n_in)))
		return err;

	struct chain_state local;
	chain_state_clear(&local);
	struct connect_pass cp = {
	    .ck = ck,
	    .b = b,
	    .node = node,
	    .flags = chain_block_script_flags(p, &node->hash, node->height),
	    .enforce_bip68 = node->height >= p->csv_height,
	    .undo = just_check ? NULL : undo,
	    .info = info,
	    .st = &local,
	    .skip_scripts = skip_scripts,
	};
	struct check_round round = {.flags = cp.flags};
	ck->handed = false;
	if (ck->q)
		pool_queue_begin(ck->q, &round);
	uint32_t undo_next = 0;
	for (uint32_t i = 0; i < b->n_tx && !err; i++)
		err = connect_tx(&cp, i, &undo_next);
	if (!err) {
		int64_t reward = cp.info->fees + chain_block_subsidy(node->height, p);
		int64_t paid = 0;
		for (uint32_t k = 0; k < b->txs[0].n_out; k++)
			paid += b->txs[0].vout[k].value;
		if (paid > reward)
			err = chain_reject(&local, CHAIN_RESULT_CONSENSUS, "bad-cb-amount",
			                   "coinbase pays too much (actual=%lld vs limit=%lld)",
			                   (long long)paid, (long long)reward);
	}
	if (ck->q) {
		/* The last jobs not yet handed over; after a failure nobody needs
		 * their verdict, so they are released unrun. */
		if (!err && ck->jobs.len && pool_queue_take_vec(ck->q, &ck->jobs))
			err = CHAIN_ENOMEM;
		pool_vec_clear(&ck->jobs, NULL, NULL);
		int verdict = pool_queue_complete(ck->q);
		if (verdict && !err)
			err = reject_script(&local, b, verdict);
	}
	if (st)
		*st = local;
	if (err)
		goto fail;
	if (just_check)
		return 0;
	if ((err = chain_view_apply(&ck->view)))
		goto fail;
	chain_coins_set_best_block(coins, &node->hash);
	return 0;
fail:
	if (undo && !just_check)
		chain_block_undo_release(undo);
	return err;
}

/* ---- disconnect ----------------------------------------------------------- */

static bool coin_matches(const struct chain_coin *c, const struct proto_txout *o,
                         const uint8_t *script, int32_t height, bool coinbase)
{
	return c->value == o->value && c->height == (uint32_t)height && c->coinbase == coinbase &&
	       c->script_len == o->script_len && !memcmp(c->script, script, o->script_len);
}

/* Spend the outputs of tx; a missing or different one makes it unclean. */
static int undo_outputs(struct chain_coins *coins, struct proto_tx *tx, int32_t height,
                        bool coinbase, bool *unclean)
{
	struct proto_outpoint op = {.txid = *proto_tx_txid(tx)};
	for (op.n = 0; op.n < tx->n_out; op.n++) {
		const struct proto_txout *o = &tx->vout[op.n];
		const uint8_t *script = proto_txout_script(tx, o);
		if (chain_script_unspendable(script, o->script_len))
			continue;
		struct chain_coin c;
		int err = chain_coins_get(coins, &op, &c);
		if (err == CHAIN_ENOTFOUND) {
			*unclean = true;
			continue;
		}
		if (err)
			return err;
		if (!coin_matches(&c, o, script, height, coinbase))
			*unclean = true;
		if ((err = chain_coins_spend(coins, &op)))
			return err;
	}
	return 0;
}

int chain_disconnect_block(struct chain_coins *coins, struct proto_block *b,
                           const struct chain_node *node, const struct proto_params *p,
                           const struct chain_block_undo *undo, bool *unclean)
{
	*unclean = false;
	if (!node->prev || b->n_tx == 0)
		return CHAIN_EARG;
	if (undo->n_tx + 1 != b->n_tx)
		return CHAIN_ECORRUPT;
	/* Check the undo data fits the block before changing anything. */
	for (uint32_t i = 1; i < b->n_tx; i++) {
		uint32_t first = undo->first[i - 1], n = undo->n_coins[i - 1];
		if (n != b->txs[i].n_in || first > undo->total || undo->total - first < n)
			return CHAIN_ECORRUPT;
	}
	bool bip30_repeat = chain_is_bip30_repeat(p, node);
	for (uint32_t i = b->n_tx; i-- > 0;) {
		struct proto_tx *tx = &b->txs[i];
		/* The repeated coinbases' first copies were overwritten, not spent:
		 * Core leaves their outputs alone. */
		if (!(i == 0 && bip30_repeat)) {
			int err = undo_outputs(coins, tx, node->height, i == 0, unclean);
			if (err)
				return err;
		}
		if (i == 0)
			break;
		const struct chain_undo_coin *uc = &undo->coins[undo->first[i - 1]];
		for (uint32_t j = tx->n_in; j-- > 0;) {
			struct chain_coin c;
			int err = chain_coins_get(coins, &tx->vin[j].prevout, &c);
			if (err == 0)
				*unclean =
				    true; /* Core's ApplyTxInUndo: overwriting an unspent coin */
			else if (err != CHAIN_ENOTFOUND)
				return err;
			struct chain_coin restore = {
			    .value = uc[j].value,
			    .height = uc[j].height,
			    .coinbase = uc[j].coinbase,
			    .script_len = uc[j].script_len,
			    .script = uc[j].script,
			};
			if ((err = chain_coins_add(coins, &tx->vin[j].prevout, &restore, true)))
				return err;
		}
	}
	chain_coins_set_best_block(coins, &node->prev->hash);
	return 0;
}

/* ---- shared with the mempool ----------------------------------------------- */

struct chain_script_cache *chain_checker_script_cache(struct chain_checker *ck)
{
	return ck->sc;
}

void chain_checker_set_script_cache(struct chain_checker *ck, struct chain_script_cache *sc)
{
	chain_script_cache_free(ck->sc);
	ck->sc = sc;
}

int chain_checker_verify_tx(struct chain_checker *ck, const struct proto_tx *tx,
                            const struct script_spent_output *spent, struct script_precomputed *pre,
                            uint32_t flags, bool *failed, uint32_t *bad_input, int *script_err)
{
	*failed = false;
	script_precompute(pre, tx, spent, false);
	int verdict = 0;
	if (ck->q && tx->n_in > 1) {
		struct check_round round = {.flags = flags};
		pool_queue_begin(ck->q, &round);
		int err = 0;
		for (uint32_t j = 0; j < tx->n_in && !err; j++) {
			struct check_job *job = pool_vec_emplace(&ck->jobs);
			if (!job) {
				err = CHAIN_ENOMEM;
				break;
			}
			job->tx = tx;
			job->pre = pre;
			job->amount = spent[j].amount;
			job->in = j;
			job->tx_index = 0;
			if (pool_sbuf_init_in(&job->spk, &ck->jobs, spent[j].script,
			                      spent[j].script_len)) {
				ck->jobs.len--;
				err = CHAIN_ENOMEM;
			}
			if (!err && ck->jobs.len >= CHAIN_JOB_HANDOFF &&
			    pool_queue_take_vec(ck->q, &ck->jobs))
				err = CHAIN_ENOMEM;
		}
		if (!err && ck->jobs.len && pool_queue_take_vec(ck->q, &ck->jobs))
			err = CHAIN_ENOMEM;
		pool_vec_clear(&ck->jobs, NULL, NULL);
		verdict = pool_queue_complete(ck->q);
		if (err)
			return err;
		if (!verdict)
			return 0;
	}
	/* In place, in input order: without workers this is the check; after
	 * a parallel failure it finds the first failing input, the one Core
	 * (checking in order) reports. */
	for (uint32_t j = 0; j < tx->n_in; j++) {
		int serr = SCRIPT_ERR_OK;
		if (script_verify_input(tx, j, &spent[j], flags, pre, &serr)) {
			*failed = true;
			*bad_input = j;
			*script_err = serr ? serr : SCRIPT_ERR_UNKNOWN_ERROR;
			return 0;
		}
	}
	if (verdict) { /* cannot happen (the checks are deterministic): fail safe */
		*failed = true;
		*bad_input = 0;
		*script_err = verdict & 0xff;
	}
	return 0;
}
