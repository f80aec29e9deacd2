/*
 * daemon/ctl/fees_methods.c: estimatesmartfee and estimaterawfee, Core
 * 29's (rpc/fees.cpp): the same parameters, answers, error codes and
 * texts. The estimator (fees/) belongs to the validation thread, so these
 * are chain methods: they run there, after every event already told to it.
 */
#include "daemon/ctl/internal.h"

#include <math.h>
#include <strings.h>

#include "fees/fees.h"
#include "mempool/mempool.h"
#include "json/json.h"

#define ok  ctl_ok
#define arg ctl_arg

/* Core's EnsureFeeEstimator: none under -blocksonly. */
static const struct fees_estimator *estimator(const struct ctl_chain_ctx *x, struct ctl_result *res)
{
	if (!x->fees)
		ctl_fail(res, CTL_INTERNAL_ERROR, "Fee estimation disabled");
	return x->fees;
}

/* Core's ParseConfirmTarget. */
static bool conf_target(json_t *v, unsigned max, unsigned *out, struct ctl_result *res)
{
	int64_t t;
	if (!ctl_arg_int(v, INT32_MIN, INT32_MAX, 0, &t, res))
		return false;
	if (t < 1 || (uint64_t)(uint32_t)(int32_t)t > max) {
		ctl_fail(res, CTL_INVALID_PARAMETER,
		         "Invalid conf_target, must be between %u and %u", 1u, max);
		return false;
	}
	*out = (unsigned)t;
	return true;
}

static void m_estimatesmartfee(struct chain *c, const struct ctl_chain_ctx *x, json_t *args,
                               struct ctl_result *res)
{
	(void)c;
	const struct fees_estimator *f = estimator(x, res);
	unsigned target;
	if (!f || !conf_target(arg(args, 0), fees_max_target(f, FEES_LONG), &target, res))
		return;
	bool conservative = false;
	json_t *mode = arg(args, 1);
	if (mode && !json_is_null(mode)) {
		/* Core's FeeModeFromString: the names, in any case. */
		const char *m = json_string_value(mode);
		if (strcasecmp(m, "unset") && strcasecmp(m, "economical") &&
		    strcasecmp(m, "conservative")) {
			ctl_fail(res, CTL_INVALID_PARAMETER,
			         "Invalid estimate_mode parameter, must be one of: \"unset\", "
			         "\"economical\", \"conservative\"");
			return;
		}
		conservative = strcasecmp(m, "conservative") == 0;
	}
	int returned = (int)target;
	int64_t rate = fees_estimate_smart(f, (int)target, conservative, &returned);
	json_t *o = json_object();
	if (!o) {
		ok(res, NULL);
		return;
	}
	if (rate != 0) {
		/* Never below what the pool takes now. */
		if (x->mempool) {
			struct mempool_info in;
			mempool_get_info(x->mempool, &in);
			if (in.mempoolminfee > rate)
				rate = in.mempoolminfee;
			if (in.minrelaytxfee > rate)
				rate = in.minrelaytxfee;
		}
		json_object_set_new(o, "feerate", json_amount(rate));
	} else {
		json_t *e = json_array();
		json_array_append_new(e, json_string("Insufficient data or no feerate found"));
		json_object_set_new(o, "errors", e);
	}
	json_object_set_new(o, "blocks", json_integer(returned));
	ok(res, o);
}

static json_t *bucket_json(const struct fees_bucket *b)
{
	json_t *o = json_object();
	if (!o)
		return NULL;
	json_object_set_new(o, "startrange", json_double(round(b->start)));
	json_object_set_new(o, "endrange", json_double(round(b->end)));
	json_object_set_new(o, "withintarget",
	                    json_double(round(b->within_target * 100.0) / 100.0));
	json_object_set_new(o, "totalconfirmed",
	                    json_double(round(b->total_confirmed * 100.0) / 100.0));
	json_object_set_new(o, "inmempool", json_double(round(b->in_mempool * 100.0) / 100.0));
	json_object_set_new(o, "leftmempool", json_double(round(b->left_mempool * 100.0) / 100.0));
	return o;
}

static void m_estimaterawfee(struct chain *c, const struct ctl_chain_ctx *x, json_t *args,
                             struct ctl_result *res)
{
	(void)c;
	const struct fees_estimator *f = estimator(x, res);
	unsigned target;
	if (!f || !conf_target(arg(args, 0), fees_max_target(f, FEES_LONG), &target, res))
		return;
	double threshold = 0.95;
	json_t *t = arg(args, 1);
	if (t && !json_is_null(t))
		threshold = json_number_value(t);
	if (threshold < 0 || threshold > 1) {
		ctl_fail(res, CTL_INVALID_PARAMETER, "Invalid threshold");
		return;
	}
	json_t *o = json_object();
	for (int h = 0; o && h < FEES_N_HORIZONS; h++) {
		/* Only the horizons that track the target. */
		if (target > fees_max_target(f, (enum fees_horizon)h))
			continue;
		struct fees_result r;
		int64_t rate =
		    fees_estimate_raw(f, (int)target, threshold, (enum fees_horizon)h, &r);
		json_t *hr = json_object();
		if (!hr)
			break;
		if (rate != 0) {
			json_object_set_new(hr, "feerate", json_amount(rate));
			json_object_set_new(hr, "decay", json_double(r.decay));
			json_object_set_new(hr, "scale", json_integer(r.scale));
			json_object_set_new(hr, "pass", bucket_json(&r.pass));
			/* A fail start of -1: every bucket passed. */
			if (r.fail.start != -1)
				json_object_set_new(hr, "fail", bucket_json(&r.fail));
		} else {
			json_object_set_new(hr, "decay", json_double(r.decay));
			json_object_set_new(hr, "scale", json_integer(r.scale));
			json_object_set_new(hr, "fail", bucket_json(&r.fail));
			json_t *e = json_array();
			json_array_append_new(
			    e, json_string(
			           "Insufficient data or no feerate found which meets threshold"));
			json_object_set_new(hr, "errors", e);
		}
		json_object_set_new(o, fees_horizon_str((enum fees_horizon)h), hr);
	}
	ok(res, o);
}

const struct ctl_method ctl_fees_methods[] = {
    {"estimatesmartfee",
     NULL,
     {{"conf_target", CTL_ARG_NUM, CTL_REQUIRED}, {"estimate_mode", CTL_ARG_STR, CTL_OPTIONAL}},
     "estimatesmartfee conf_target ( \"estimate_mode\" )",
     "Estimates the approximate fee per kilobyte needed for a transaction to begin\n"
     "confirmation within conf_target blocks if possible and return the number of blocks\n"
     "for which the estimate is valid. Uses virtual transaction size as defined\n"
     "in BIP 141 (witness data is discounted).",
     m_estimatesmartfee,
     NULL},
    {"estimaterawfee",
     NULL,
     {{"conf_target", CTL_ARG_NUM, CTL_REQUIRED}, {"threshold", CTL_ARG_NUM, CTL_OPTIONAL}},
     "estimaterawfee conf_target ( threshold )",
     "WARNING: This interface is unstable and may disappear or change!\n"
     "Estimates the approximate fee per kilobyte needed for a transaction to begin\n"
     "confirmation within conf_target blocks if possible, for each horizon (short, medium,\n"
     "long) that tracks the target: the feerate, the decay and scale, and the pass and fail\n"
     "bucket ranges with their counts.",
     m_estimaterawfee,
     NULL},
};
const size_t ctl_n_fees_methods = sizeof(ctl_fees_methods) / sizeof(ctl_fees_methods[0]);
