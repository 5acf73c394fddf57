/* planner report: a strategy checkpoint as one self-contained HTML page. */
#ifndef PL_REPORT_H
#define PL_REPORT_H

#include <cjson/cJSON.h>

#include "graph/status.h"

/* The page for checkpoint ck (source: its file name, shown on the page) into
 * *out (the caller frees it): the step and its parts, the device mesh by
 * group, the pipeline schedule, memory per device against its capacity, the
 * strategies by part and per op, the groups' links. Inline SVG and CSS only:
 * no script, nothing fetched. PL_ENOMEM when out of memory. */
pl_status pl_report_html(const cJSON *ck, const char *source, char **out, pl_err *err);

#endif
