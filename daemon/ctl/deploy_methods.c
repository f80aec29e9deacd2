/*
 * daemon/ctl/deploy_methods.c: getdeploymentinfo, as Bitcoin Core 29's
 * rpc/blockchain.cpp (DeploymentInfo, the two SoftForkDescPushBack). A
 * chain method: chain/versionbits.c's cache is the validation thread's.
 *
 * The buried deployments are the heights of proto/params.h; the BIP9
 * ones are chain_vb's. For a block B, Core reports the state B itself
 * had ("status", computed on B's parent), the state of the block after B
 * ("status_next"), and calls a deployment active when the block after B
 * enforces it (so "active" turns true one block before "status" says
 * "active", with "height" the first block that enforces it).
 */
#include "daemon/ctl/internal.h"

#include <stdlib.h>

#include "chain/chain.h"
#include "json/json.h"

/* Core's buried SoftForkDescPushBack: active for the block after `at`. */
static void buried(json_t *o, const char *name, const struct chain_node *at, int32_t height)
{
	json_t *d = json_object();
	if (!d)
		return;
	json_object_set_new(d, "type", json_string("buried"));
	json_object_set_new(d, "active", json_boolean(at->height + 1 >= height));
	json_object_set_new(d, "height", json_integer(height));
	json_object_set_new(o, name, d);
}

/* Core's VersionBitsCache::Info and the BIP9 SoftForkDescPushBack. */
static void bip9(json_t *o, struct chain_vb *vb, const struct chain_node *at, enum chain_vb_pos pos)
{
	if (!chain_vb_enabled(vb, pos))
		return;
	const struct chain_vb_deployment *dp = chain_vb_deployment(vb, pos);
	enum chain_vb_state cur = chain_vb_state(vb, at->prev, pos);
	enum chain_vb_state next = chain_vb_state(vb, at, pos);
	int32_t since = chain_vb_since(vb, at->prev, pos);
	bool has_signal = cur == CHAIN_VB_STARTED || cur == CHAIN_VB_LOCKED_IN;
	json_t *b = json_object(), *d = json_object();
	if (!b || !d) {
		json_decref(b);
		json_decref(d);
		return;
	}
	if (has_signal)
		json_object_set_new(b, "bit", json_integer(dp->bit));
	json_object_set_new(b, "start_time", json_integer(dp->start_time));
	json_object_set_new(b, "timeout", json_integer(dp->timeout));
	json_object_set_new(b, "min_activation_height", json_integer(dp->min_activation_height));
	json_object_set_new(b, "status", json_string(chain_vb_state_name(cur)));
	json_object_set_new(b, "since", json_integer(since));
	json_object_set_new(b, "status_next", json_string(chain_vb_state_name(next)));
	if (has_signal) {
		struct chain_vb_stats st;
		char *sig = xmalloc((size_t)dp->period + 1);
		chain_vb_statistics(vb, at, pos, &st, sig);
		/* Once locked in, the threshold no longer matters: Core says nothing of it. */
		if (cur == CHAIN_VB_LOCKED_IN) {
			st.threshold = 0;
			st.possible = false;
		}
		json_t *s = json_object();
		if (s) {
			json_object_set_new(s, "period", json_integer(st.period));
			json_object_set_new(s, "elapsed", json_integer(st.elapsed));
			json_object_set_new(s, "count", json_integer(st.count));
			if (st.threshold > 0 || st.possible) {
				json_object_set_new(s, "threshold", json_integer(st.threshold));
				json_object_set_new(s, "possible", json_boolean(st.possible));
			}
			json_object_set_new(b, "statistics", s);
		}
		json_object_set_new(b, "signalling", json_string(sig ? sig : ""));
		xfree(sig);
	}
	json_object_set_new(d, "type", json_string("bip9"));
	bool active = false;
	int32_t active_since = -1;
	if (cur == CHAIN_VB_ACTIVE)
		active_since = since;
	else if (next == CHAIN_VB_ACTIVE)
		active_since = at->height + 1;
	if (active_since >= 0) {
		json_object_set_new(d, "height", json_integer(active_since));
		active = active_since <= at->height + 1;
	}
	json_object_set_new(d, "active", json_boolean(active));
	json_object_set_new(d, "bip9", b);
	json_object_set_new(o, dp->name, d);
}

/* Core's DeploymentInfo for the block `at`. */
static json_t *deployments(struct chain *c, const struct chain_node *at)
{
	const struct proto_params *p = chain_params(c);
	json_t *o = json_object();
	if (!o)
		return NULL;
	buried(o, "bip34", at, p->bip34_height);
	buried(o, "bip66", at, p->bip66_height);
	buried(o, "bip65", at, p->bip65_height);
	buried(o, "csv", at, p->csv_height);
	buried(o, "segwit", at, p->segwit_height);
	for (int i = 0; i < CHAIN_VB_COUNT; i++)
		bip9(o, chain_get_vb(c), at, (enum chain_vb_pos)i);
	return o;
}

void ctl_m_getdeploymentinfo(struct chain *c, const struct ctl_chain_ctx *x, json_t *args,
                             struct ctl_result *res)
{
	(void)x;
	json_t *h = ctl_arg(args, 0);
	const struct chain_node *at = chain_tip(c);
	if (h && !json_is_null(h)) {
		struct proto_hash hash;
		if (!ctl_param_hash(h, "blockhash", &hash, res))
			return;
		if (!(at = chain_index_find(chain_get_index(c), &hash))) {
			ctl_fail(res, CTL_INVALID_ADDRESS_OR_KEY, "Block not found");
			return;
		}
	}
	json_t *o = json_object();
	if (o) {
		json_object_set_new(o, "hash", json_hash(&at->hash));
		json_object_set_new(o, "height", json_integer(at->height));
		json_object_set_new(o, "deployments", deployments(c, at));
	}
	ctl_ok(res, o);
}
