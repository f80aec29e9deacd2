/*
 * daemon/ctl/template_methods.c: getblocktemplate and getmininginfo, as
 * Bitcoin Core 29's rpc/mining.cpp. Chain methods: they run on the
 * validation thread, where the chain and the pool hold still.
 *
 * The template comes from mining_template_new (mining/template.c). As
 * Core's, it is kept and answered again until the tip changes, or the
 * pool changed and 5 seconds passed since it was made; only the time
 * (curtime, and the bits on a network where they follow the clock) is
 * new at each call. Core keeps that template, and the weight and count of
 * the last block assembled (getmininginfo's currentblockweight and
 * currentblocktx, also set by generatetoaddress), in statics; so does this
 * file, for the same reason: one node, one validation thread, which alone
 * touches them. A longpollid naming the tip waits as Core's (longpoll()
 * here says whether to answer; ctl/longpoll.c parks the call between
 * runs, on the loop: no thread waits). What differs: the client name in
 * the -9 and -10 errors is peerd's.
 */
#include "daemon/ctl/internal.h"

#include <stdio.h>
#include <string.h>

#include "chain/chain.h"
#include "json/json.h"
#include "mempool/mempool.h"
#include "mining/mining.h"

/** Core's RPC_CLIENT_NOT_CONNECTED and RPC_CLIENT_IN_INITIAL_DOWNLOAD. */
#define TEMPLATE_NOT_CONNECTED -9
#define TEMPLATE_IN_IBD        -10
/** Seconds a template is kept while the pool changes (Core's 5). */
#define TEMPLATE_MAX_AGE 5

/* The validation thread's: the kept template (Core's statics in getblocktemplate). */
static struct {
	bool valid;
	struct proto_hash tip;
	uint64_t pool_seq; /* mempool_updates when it was made (Core's nTransactionsUpdatedLast) */
	int64_t made;      /* chain_now when it was made */
	struct mining_template t;
} kept;

/* Core's BlockAssembler::m_last_block_weight and m_last_block_num_txs. */
static struct {
	bool set;
	uint64_t weight, n_tx;
} last_block;

void ctl_mining_note_block(uint64_t weight, uint64_t n_tx)
{
	last_block.set = true;
	last_block.weight = weight;
	last_block.n_tx = n_tx;
}

static struct mining_block_opts block_opts(const struct peerd_conf *conf)
{
	struct mining_block_opts o = MINING_BLOCK_OPTS_DEFAULT;
	if (conf) {
		o.max_weight = conf->blockmaxweight;
		o.reserved_weight = conf->blockreservedweight;
		o.min_fee_rate = conf->blockmintxfee;
	}
	return o;
}

/* ---- proposal mode --------------------------------------------------------- */

/* Core's getblocktemplate proposal: BIP23's answer for a block on the tip. */
static void proposal(struct chain *c, json_t *req, struct ctl_result *res)
{
	json_t *data = json_object_get(req, "data");
	if (!json_is_string(data)) {
		ctl_fail(res, CTL_TYPE_ERROR, "Missing data String key for proposal");
		return;
	}
	size_t hl = json_string_length(data);
	uint8_t *raw = xmalloc(hl / 2 + 1);
	size_t len = 0;
	struct proto_block b;
	proto_block_init(&b);
	if (!raw) {
		ctl_fail(res, CTL_INTERNAL_ERROR, "out of memory");
		return;
	}
	if (hl % 2 || proto_hex_decode(json_string_value(data), hl, raw, hl / 2 + 1, &len) ||
	    proto_block_decode(raw, len, &b, NULL)) {
		ctl_fail(res, CTL_DESERIALIZATION_ERROR, "Block decode failed");
		goto out;
	}
	struct proto_hash h;
	proto_block_header_hash(&b.hdr, &h);
	const struct chain_node *n = chain_index_find(chain_get_index(c), &h);
	if (n) {
		const char *why = "duplicate-inconclusive";
		if ((n->status & CHAIN_VALID_MASK) >= CHAIN_VALID_SCRIPTS)
			why = "duplicate";
		else if (n->status & CHAIN_FAILED_MASK)
			why = "duplicate-invalid";
		ctl_ok(res, json_string(why));
		goto out;
	}
	if (!proto_hash_eq(&b.hdr.prev, &chain_tip(c)->hash)) {
		ctl_ok(res, json_string("inconclusive-not-best-prevblk"));
		goto out;
	}
	struct chain_state st;
	int err = mining_test_block(c, &b, true, NULL, &st);
	if (!err)
		ctl_ok(res, json_null());
	else if (err == CHAIN_EINVALID)
		ctl_ok(res, json_string(st.reason[0] ? st.reason : "rejected"));
	else
		ctl_fail(res, CTL_VERIFY_ERROR, "%s", chain_strerror(err));
out:
	proto_block_release(&b);
	xfree(raw);
}

/* ---- template mode --------------------------------------------------------- */

/* The kept template, made again when Core would make it again. */
static int fresh_template(struct chain *c, const struct ctl_chain_ctx *x)
{
	const struct chain_node *tip = chain_tip(c);
	uint64_t seq = mempool_updates(x->mempool);
	int64_t now = chain_now(c);
	if (kept.valid && proto_hash_eq(&kept.tip, &tip->hash) &&
	    (seq == kept.pool_seq || now - kept.made <= TEMPLATE_MAX_AGE))
		return 0;
	mining_template_release(&kept.t);
	kept.valid = false;
	struct mining_block_opts o = block_opts(x->conf);
	int err = mining_template_new(c, x->mempool, &o, &kept.t);
	if (err)
		return err;
	kept.valid = true;
	kept.tip = tip->hash;
	kept.pool_seq = seq;
	kept.made = now;
	ctl_mining_note_block(kept.t.weight, kept.t.n);
	return 0;
}

/* Core's rules, vbavailable and the version's deployment bits (GBTStatus). */
static int32_t versionbits(struct chain *c, const struct chain_node *tip, int32_t version,
                           json_t *rules, json_t *avail)
{
	struct chain_vb *vb = chain_get_vb(c);
	/* Core walks them by name (a std::map): taproot before testdummy. */
	enum chain_vb_pos order[CHAIN_VB_COUNT];
	for (int i = 0; i < CHAIN_VB_COUNT; i++)
		order[i] = (enum chain_vb_pos)i;
	for (int i = 1; i < CHAIN_VB_COUNT; i++)
		for (int k = i; k > 0 && strcmp(chain_vb_deployment(vb, order[k])->name,
		                                chain_vb_deployment(vb, order[k - 1])->name) < 0;
		     k--) {
			enum chain_vb_pos t = order[k];
			order[k] = order[k - 1];
			order[k - 1] = t;
		}
	for (int i = 0; i < CHAIN_VB_COUNT; i++) {
		const struct chain_vb_deployment *d = chain_vb_deployment(vb, order[i]);
		switch (chain_vb_state(vb, tip, order[i])) {
		case CHAIN_VB_LOCKED_IN:
			/* Signalled whatever the client said; still available. */
			version |= (int32_t)(1u << d->bit);
			json_object_set_new(avail, d->name, json_integer(d->bit));
			break;
		case CHAIN_VB_STARTED:
			json_object_set_new(avail, d->name, json_integer(d->bit));
			break;
		case CHAIN_VB_ACTIVE:
			json_array_append_new(rules, json_string(d->name));
			break;
		case CHAIN_VB_DEFINED:
		case CHAIN_VB_FAILED:
			break;
		}
	}
	return version;
}

/* The template's transactions as Core lists them. */
static json_t *template_txs(const struct mining_template *t)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < t->n; i++) {
		const struct mining_template_tx *x = &t->txs[i];
		json_t *e = json_object(), *deps = json_array();
		if (!e || !deps) {
			json_decref(e);
			json_decref(deps);
			json_decref(a);
			return NULL;
		}
		/* Parents earlier in the block, by 1-based position (the coinbase is 0). */
		struct proto_tx tx;
		proto_tx_init(&tx);
		if (proto_tx_decode_buf(x->raw, x->len, &tx, NULL) == 0) {
			for (uint32_t k = 0; k < tx.n_in; k++)
				for (size_t j = 0; j < i; j++)
					if (proto_hash_eq(&tx.vin[k].prevout.txid,
					                  &t->txs[j].txid)) {
						json_array_append_new(
						    deps, json_integer((json_int_t)j + 1));
						break;
					}
		}
		proto_tx_release(&tx);
		json_object_set_new(e, "data", json_hex(x->raw, x->len));
		json_object_set_new(e, "txid", json_hash(&x->txid));
		json_object_set_new(e, "hash", json_hash(&x->wtxid));
		json_object_set_new(e, "depends", deps);
		json_object_set_new(e, "fee", json_integer(x->fee));
		json_object_set_new(e, "sigops", json_integer(x->sigops));
		json_object_set_new(e, "weight", json_integer(x->weight));
		json_array_append_new(a, e);
	}
	return a;
}

static json_t *strings(const char *const *v, size_t n)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < n; i++)
		json_array_append_new(a, json_string(v[i]));
	return a;
}

static void template_answer(struct chain *c, const struct ctl_chain_ctx *x, struct ctl_result *res)
{
	int err = fresh_template(c, x);
	if (err) {
		ctl_fail(res, CTL_INTERNAL_ERROR, "CreateNewBlock: %s", chain_strerror(err));
		return;
	}
	const struct mining_template *t = &kept.t;
	const struct chain_node *tip = chain_tip(c);
	const struct proto_params *p = chain_params(c);
	/* Core's UpdateTime: the clock now, and on min-difficulty networks the bits with it. */
	uint32_t time = mining_block_time(c, tip);
	uint32_t bits = chain_next_work_required(tip, time, p);
	bool segwit = t->height >= p->segwit_height;
	static const char *const caps[] = {"proposal"};
	static const char *const mut[] = {"time", "transactions", "prevblock"};
	json_t *o = json_object(), *rules = json_array(), *avail = json_object();
	if (!o || !rules || !avail) {
		json_decref(o);
		json_decref(rules);
		json_decref(avail);
		ctl_fail(res, CTL_INTERNAL_ERROR, "out of memory");
		return;
	}
	json_array_append_new(rules, json_string("csv"));
	if (segwit)
		json_array_append_new(rules, json_string("!segwit"));
	if (p->signet_challenge)
		json_array_append_new(rules, json_string("!signet"));
	int32_t version = versionbits(c, tip, t->version, rules, avail);
	char lp[65 + 24];
	char hex[65];
	proto_hash_to_hex(&tip->hash, hex);
	snprintf(lp, sizeof(lp), "%s%llu", hex, (unsigned long long)kept.pool_seq);
	json_object_set_new(o, "capabilities", strings(caps, 1));
	json_object_set_new(o, "version", json_integer(version));
	json_object_set_new(o, "rules", rules);
	json_object_set_new(o, "vbavailable", avail);
	json_object_set_new(o, "vbrequired", json_integer(0));
	json_object_set_new(o, "previousblockhash", json_hash(&tip->hash));
	json_object_set_new(o, "transactions", template_txs(t));
	json_object_set_new(o, "coinbaseaux", json_object());
	json_object_set_new(o, "coinbasevalue", json_integer(t->coinbase_value));
	json_object_set_new(o, "longpollid", json_string(lp));
	json_object_set_new(o, "target", json_target(bits));
	json_object_set_new(o, "mintime", json_integer(mining_min_time(c, tip)));
	json_object_set_new(o, "mutable", strings(mut, 3));
	json_object_set_new(o, "noncerange", json_string("00000000ffffffff"));
	/* Before segwit Core counts in legacy sigops and bytes. */
	json_object_set_new(
	    o, "sigoplimit",
	    json_integer(segwit ? CHAIN_MAX_BLOCK_SIGOPS_COST : CHAIN_MAX_BLOCK_SIGOPS_COST / 4));
	json_object_set_new(o, "sizelimit", json_integer(segwit ? 4000000 : 1000000));
	if (segwit)
		json_object_set_new(o, "weightlimit", json_integer(4000000));
	json_object_set_new(o, "curtime", json_integer(time));
	json_object_set_new(o, "bits", json_hex32(bits));
	json_object_set_new(o, "height", json_integer(t->height));
	if (p->signet_challenge)
		json_object_set_new(o, "signet_challenge",
		                    json_hex(p->signet_challenge, p->signet_challenge_len));
	if (t->has_commitment)
		json_object_set_new(o, "default_witness_commitment",
		                    json_hex(t->commitment, sizeof(t->commitment)));
	ctl_ok(res, o);
}

/* Core's LocaleIndependentAtoi<int64_t>: blanks trimmed, one '+' allowed,
 * the leading digits (a '-' before them); 0 when there are none, and the
 * int64 bound when they overflow. */
static int64_t core_atoi64(const char *s, size_t n)
{
	static const char blank[] = " \f\n\r\t\v";
	while (n && strchr(blank, *s) && *s) {
		s++;
		n--;
	}
	while (n && strchr(blank, s[n - 1]) && s[n - 1])
		n--;
	if (n && *s == '+') {
		if (n >= 2 && s[1] == '-')
			return 0;
		s++;
		n--;
	}
	bool neg = n && *s == '-';
	size_t i = neg ? 1 : 0;
	if (i >= n || s[i] < '0' || s[i] > '9')
		return 0;
	uint64_t v = 0, lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	for (; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
		if (v > (lim - (uint64_t)(s[i] - '0')) / 10) {
			return neg ? INT64_MIN : INT64_MAX;
		}
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	return neg ? (int64_t)(0 - v) : (int64_t)v;
}

/*
 * Core's longpoll: a longpollid is <tip hash><mempool counter> (another
 * JSON type watches the tip now and the kept template's counter). The call
 * waits while the tip is the watched block: a new tip ends the wait, and
 * so does, on the runs that come from the clock (a minute in, then every
 * 10 s), a mempool counter other than the id's. True: answer now; false:
 * res holds an error, or the call waits (x->wait set).
 */
static bool longpoll(struct chain *c, const struct ctl_chain_ctx *x, json_t *lp,
                     struct ctl_result *res)
{
	struct proto_hash watched;
	uint32_t seen;
	if (json_is_string(lp)) {
		const char *s = json_string_value(lp);
		size_t n = json_string_length(lp);
		json_t *head = json_stringn(s, n < 64 ? n : 64);
		if (!head) {
			ctl_fail(res, CTL_INTERNAL_ERROR, "out of memory");
			return false;
		}
		bool ok = ctl_param_hash(head, "longpollid", &watched, res);
		json_decref(head);
		if (!ok)
			return false;
		/* Core keeps it in an unsigned int. */
		seen = (uint32_t)core_atoi64(s + 64, n - 64);
	} else {
		watched = chain_tip(c)->hash;
		seen = (uint32_t)kept.pool_seq;
	}
	if (!x->wait || !proto_hash_eq(&chain_tip(c)->hash, &watched))
		return true;
	if (x->wait->pool_check && (uint32_t)mempool_updates(x->mempool) != seen)
		return true;
	x->wait->wanted = true;
	x->wait->tip = watched;
	return false;
}

static bool has_rule(json_t *rules, const char *name)
{
	size_t i;
	json_t *v;
	json_array_foreach(rules, i, v)
	{
		if (json_is_string(v) && strcmp(json_string_value(v), name) == 0)
			return true;
	}
	return false;
}

void ctl_m_getblocktemplate(struct chain *c, const struct ctl_chain_ctx *x, json_t *args,
                            struct ctl_result *res)
{
	json_t *req = ctl_arg(args, 0);
	const char *mode = "template";
	json_t *rules = NULL;
	if (req && !json_is_null(req)) {
		json_t *m = json_object_get(req, "mode");
		if (json_is_string(m)) {
			mode = json_string_value(m);
		} else if (m && !json_is_null(m)) {
			ctl_fail(res, CTL_INVALID_PARAMETER, "Invalid mode");
			return;
		}
		if (strcmp(mode, "proposal") == 0) {
			proposal(c, req, res);
			return;
		}
		rules = json_object_get(req, "rules");
		if (json_is_array(rules)) {
			size_t i;
			json_t *v;
			json_array_foreach(rules, i, v)
			{
				if (!ctl_json_want(v, CTL_ARG_STR, res))
					return;
			}
		} else {
			rules = NULL;
		}
	}
	if (strcmp(mode, "template") != 0) {
		ctl_fail(res, CTL_INVALID_PARAMETER, "Invalid mode");
		return;
	}
	const struct proto_params *p = chain_params(c);
	if (p->net == PROTO_NET_MAIN) {
		if (x->n_peers == 0) {
			ctl_fail(res, TEMPLATE_NOT_CONNECTED, "peerd is not connected!");
			return;
		}
		if (chain_in_ibd(c)) {
			ctl_fail(res, TEMPLATE_IN_IBD,
			         "peerd is in initial sync and waiting for blocks...");
			return;
		}
	}
	json_t *lp = req && json_is_object(req) ? json_object_get(req, "longpollid") : NULL;
	if (lp && !json_is_null(lp) && !longpoll(c, x, lp, res))
		return;
	if (p->signet_challenge && !has_rule(rules, "signet")) {
		ctl_fail(res, CTL_INVALID_PARAMETER,
		         "getblocktemplate must be called with the signet rule set (call with "
		         "{\"rules\": [\"segwit\", \"signet\"]})");
		return;
	}
	if (!has_rule(rules, "segwit")) {
		ctl_fail(res, CTL_INVALID_PARAMETER,
		         "getblocktemplate must be called with the segwit rule set (call with "
		         "{\"rules\": [\"segwit\"]})");
		return;
	}
	template_answer(c, x, res);
}

/* ---- getmininginfo ----------------------------------------------------------- */

/* Core's GetNetworkHashPS from block `tip` over `lookup` blocks (-1: since
 * the last retarget): the work done over the time those blocks span. */
static double network_hashps(const struct chain_node *tip, int64_t lookup, int64_t interval)
{
	if (!tip || tip->height == 0)
		return 0;
	if (lookup == -1)
		lookup = tip->height % interval + 1;
	if (lookup > tip->height)
		lookup = tip->height;
	const struct chain_node *b = tip;
	int64_t lo = tip->time, hi = tip->time;
	for (int64_t i = 0; i < lookup; i++) {
		b = b->prev;
		if ((int64_t)b->time < lo)
			lo = b->time;
		if ((int64_t)b->time > hi)
			hi = b->time;
	}
	if (lo == hi)
		return 0;
	return (chain_work_double(&tip->work) - chain_work_double(&b->work)) / (double)(hi - lo);
}

static json_t *difficulty_of(uint32_t bits, json_t *o)
{
	json_object_set_new(o, "bits", json_hex32(bits));
	json_object_set_new(o, "difficulty", json_double(chain_difficulty(bits)));
	json_object_set_new(o, "target", json_target(bits));
	return o;
}

void ctl_m_getmininginfo(struct chain *c, const struct ctl_chain_ctx *x, json_t *args,
                         struct ctl_result *res)
{
	(void)args;
	const struct chain_node *tip = chain_tip(c);
	const struct proto_params *p = chain_params(c);
	struct mempool_info mi;
	mempool_get_info(x->mempool, &mi);
	json_t *o = json_object(), *next = json_object();
	if (!o || !next) {
		json_decref(o);
		json_decref(next);
		ctl_fail(res, CTL_INTERNAL_ERROR, "out of memory");
		return;
	}
	json_object_set_new(o, "blocks", json_integer(tip->height));
	if (last_block.set) {
		json_object_set_new(o, "currentblockweight",
		                    json_integer((json_int_t)last_block.weight));
		json_object_set_new(o, "currentblocktx", json_integer((json_int_t)last_block.n_tx));
	}
	difficulty_of(tip->bits, o);
	json_object_set_new(
	    o, "networkhashps",
	    json_double(network_hashps(tip, 120, proto_params_retarget_interval(p))));
	json_object_set_new(o, "pooledtx", json_integer((json_int_t)mi.size));
	json_object_set_new(o, "chain", json_string(p->name));
	/* Core's NextEmptyBlockIndex: the next block at the clock's time. */
	json_object_set_new(next, "height", json_integer(tip->height + 1));
	difficulty_of(chain_next_work_required(tip, mining_block_time(c, tip), p), next);
	json_object_set_new(o, "next", next);
	if (p->signet_challenge)
		json_object_set_new(o, "signet_challenge",
		                    json_hex(p->signet_challenge, p->signet_challenge_len));
	ctl_ok(res, o);
}

void ctl_m_getnetworkhashps(struct chain *c, const struct ctl_chain_ctx *x, json_t *args,
                            struct ctl_result *res)
{
	(void)x;
	int64_t lookup, height;
	if (!ctl_arg_int(ctl_arg(args, 0), INT32_MIN, INT32_MAX, 120, &lookup, res) ||
	    !ctl_arg_int(ctl_arg(args, 1), INT32_MIN, INT32_MAX, -1, &height, res))
		return;
	if (lookup < -1 || lookup == 0) {
		ctl_fail(res, CTL_INVALID_PARAMETER,
		         "Invalid nblocks. Must be a positive number or -1.");
		return;
	}
	if (height < -1 || height > chain_height(c)) {
		ctl_fail(res, CTL_INVALID_PARAMETER, "Block does not exist at specified height");
		return;
	}
	const struct chain_node *at = height >= 0 ? chain_at(c, (int32_t)height) : chain_tip(c);
	ctl_ok(res, json_double(network_hashps(at, lookup,
	                                       proto_params_retarget_interval(chain_params(c)))));
}
