// What a run leaves in its output folder besides results.jsonl (spec/results.md):
// shared by `simtspec test` and `simtspec merge`, so that a merged run's folder is
// written by the same code as an unsharded run's.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "html.h"
#include "json.h"
#include "results.h"

namespace simt::cli {

// The current time as ISO 8601 UTC (results.header `started`).
std::string now_iso();
// results.header `host`: hostname, os, cpus.
json::Value host_json();
// Writes junit.xml and the HTML site (with the clauses of `spec_dir`) next to
// results.jsonl in `out`; kExitUsage with a message on error.
int write_outputs(reports::ResultsFile rf, const std::string& out, const std::string& spec_dir,
                  const reports::HtmlOptions& html = {});

// `--shard I/N` of test and fuzz (and the `shard` of a results header): I and N,
// with 0 <= I < N; nullopt for anything else.
std::optional<std::pair<uint32_t, uint32_t>> parse_shard(const std::string& text);
inline constexpr const char* kShardUsage = "--shard must be I/N with 0 <= I < N, e.g. 0/4";

}  // namespace simt::cli
