// `tandem sim --csv DIR`: the result as tables a spreadsheet or pandas loads, one file per
// scope of the metric table (docs/metrics.md): units.csv (engines and DMA queues),
// loops.csv, iterations.csv (the iterations kept), profile.csv (per instruction). Columns:
// the row's names, then every metric of that scope in table order, then its stalls by cause.
#pragma once

#include <map>
#include <string>

#include "sim/observe/sim_result.h"

namespace tandem {

// File name -> contents.
std::map<std::string, std::string> format_csv_tables(const SimResult& r);

}  // namespace tandem
