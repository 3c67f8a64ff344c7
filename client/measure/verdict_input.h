/* verdict_input: the client's side of the verdict (common/verdict.h holds the rules): the
 * adapter that fills a struct verdict_in from a run (its figures, --bottleneck, its
 * TCP_INFO and receive buffer, its transfer thread's CPU, the server's /transfers/ID
 * record), and verdict_apply, which decides and stores the outcome in the run. */
#ifndef DEBIT_VERDICT_INPUT_H
#define DEBIT_VERDICT_INPUT_H

#include "download.h"
#include "result.h"
#include "verdict.h"

/* In from r alone (its figures, bottleneck, "tcp", receiver buffer and server_record JSON;
 * any key absent or null stays NAN). */
void verdict_in_from_run(const struct run_result *r, struct verdict_in *in);

/* Record o's bottleneck in r, decide r's verdict and prediction and store them in r
 * (limited_by, limited_by_evidence, predicted_mbps). A failed run gets "unknown" and
 * says so. */
void verdict_apply(struct run_result *r, const struct dl_options *o);

#endif
