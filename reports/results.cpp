#include "results.h"

#include <algorithm>
#include <fstream>
#include <sstream>

namespace simt::reports {

JsonlWriter::~JsonlWriter() {
  close();
}

bool JsonlWriter::open(const std::string& path, std::string& err) {
  f_ = std::fopen(path.c_str(), "w");
  if (!f_) {
    err = "cannot write '" + path + "'";
    return false;
  }
  return true;
}

void JsonlWriter::write(const json::Value& line) {
  if (!f_) return;
  if (!line.is_object() || !line.find("id") || !line.find("status") ||
      !line.find("id")->is_string())
    return put(line);
  // results.test: the test's fields once, in a test line, then the rest.
  json::Value test = json::Object{}, rest = json::Object{};
  test["id"] = *line.find("id");
  for (const auto& [k, v] : line.as_object()) {
    bool per_test = std::find(kTestFields.begin(), kTestFields.end(), k) != kTestFields.end();
    (per_test ? test : rest)[k] = v;
  }
  std::string text = json::dump(test);
  std::string& last = test_lines_[line.find("id")->as_string()];
  if (last != text) {
    last = text;
    json::Value t;
    t["test"] = std::move(test);
    put(t);
  }
  put(rest);
}

void JsonlWriter::put(const json::Value& line) {
  std::string s = json::dump(line);
  s += '\n';
  std::fwrite(s.data(), 1, s.size(), f_);
  std::fflush(f_);
}

void JsonlWriter::close() {
  if (f_) std::fclose(f_);
  f_ = nullptr;
}

std::string ResultsFile::runner_name() const {
  std::string name = run_header().runner.name;
  return name.empty() ? "unknown" : name;
}

std::variant<ResultsFile, std::string> read_results(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "cannot open '" + path + "'";
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  ResultsFile r;
  r.path = path;
  // A whole JSON document?
  size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return "'" + path + "' is empty";
  auto whole = json::parse(text);
  if (auto* v = std::get_if<json::Value>(&whole); v && v->is_object() && v->find("results")) {
    const json::Value* schema = v->find("schema");
    if (!schema || !schema->is_string() || schema->as_string() != kSchema)
      return "'" + path + "' is not a simtspec results file (schema)";
    r.header = json::Object{};
    for (const auto& [k, x] : v->as_object())
      if (k != "results" && k != "summary") r.header[k] = x;
    if (!v->find("results")->is_array()) return "'" + path + "': 'results' must be an array";
    for (const json::Value& rec : v->find("results")->as_array())
      r.records.push_back(from_json(rec));
    if (const json::Value* s = v->find("summary")) r.summary = *s;
    return r;
  }
  // JSON lines.
  std::istringstream lines(text);
  std::string line;
  size_t n = 0;
  std::map<std::string, json::Object> tests;  // results.test: id -> the last test line
  while (std::getline(lines, line)) {
    ++n;
    if (line.empty()) continue;
    auto parsed = json::parse(line);
    if (std::holds_alternative<json::ParseError>(parsed)) {
      if (lines.peek() == EOF) break;  // an interrupted last line
      return path + ":" + std::to_string(n) + ": not a JSON line";
    }
    json::Value v = std::get<json::Value>(std::move(parsed));
    if (n == 1) {
      const json::Value* schema = v.find("schema");
      if (!schema || !schema->is_string() || schema->as_string() != kSchema)
        return "'" + path + "' is not a simtspec results file (first line lacks \"schema\": \"" +
               kSchema + "\")";
      r.header = std::move(v);
    } else if (const json::Value* s = v.find("summary"); s && v.as_object().size() == 1) {
      r.summary = *s;
    } else if (const json::Value* t = v.find("test"); t && v.as_object().size() == 1) {
      const json::Value* id = t->is_object() ? t->find("id") : nullptr;
      if (!id || !id->is_string())
        return path + ":" + std::to_string(n) + ": a test line needs an id";
      tests[id->as_string()] = t->as_object();
    } else {
      const json::Value* id = v.find("id");
      if (!id || !v.find("status"))
        return path + ":" + std::to_string(n) + ": a result needs id and status";
      if (id->is_string())
        if (auto it = tests.find(id->as_string()); it != tests.end())
          for (const auto& [k, x] : it->second)
            if (!v.find(k)) v[k] = x;
      r.records.push_back(from_json(v));
    }
  }
  if (r.header.is_null()) return "'" + path + "' has no header line";
  return r;
}

bool is_bad_status(std::string_view status) {
  auto s = parse_status(status);
  return s && info(*s).failing;
}

size_t count_of(const std::map<std::string, size_t>& counts, std::string_view status) {
  auto it = counts.find(std::string(status));
  return it == counts.end() ? 0 : it->second;
}

std::string thousands(uint64_t n) {
  std::string d = std::to_string(n), out;
  for (size_t i = 0; i < d.size(); ++i) {
    if (i && (d.size() - i) % 3 == 0) out += ',';
    out += d[i];
  }
  return out;
}

std::string share_run(size_t run, size_t total) {
  std::string pct;
  if (total == 0)
    pct = "n/a";
  else if (run > 0 && run * 100 < total)
    pct = "<1%";
  else
    pct = std::to_string(run * 100 / total) + "%";
  return thousands(run) + " of " + thousands(total) + " configuration" + (total == 1 ? "" : "s") +
         " run (" + pct + ")";
}

std::string xml_escape(const std::string& s) {
  std::string o;
  for (unsigned char c : s) {
    switch (c) {
      case '&':
        o += "&amp;";
        break;
      case '<':
        o += "&lt;";
        break;
      case '>':
        o += "&gt;";
        break;
      case '"':
        o += "&quot;";
        break;
      case '\'':
        o += "&apos;";
        break;
      default:
        // XML 1.0 forbids most control characters, even escaped.
        if (c < 0x20 && c != '\n' && c != '\t' && c != '\r')
          o += "?";
        else
          o += static_cast<char>(c);
    }
  }
  return o;
}

namespace {

// A record's JUnit element kind, from the status table; a status not in the
// table is skipped, with its name in the message.
JunitKind junit_kind(const Record& rec) {
  return rec.status ? info(*rec.status).junit : JunitKind::skipped;
}

}  // namespace

std::string junit_xml(const ResultsFile& r) {
  const std::vector<Record>& records = r.records;
  // results.junit: one testsuite per first feature tag.
  std::map<std::string, std::vector<const Record*>> suites;
  size_t failures = 0, errors = 0, skipped = 0;
  for (const auto& rec : records) {
    suites[rec.features.empty() ? "other" : rec.features[0]].push_back(&rec);
    switch (junit_kind(rec)) {
      case JunitKind::passed:
        break;
      case JunitKind::failure:
        ++failures;
        break;
      case JunitKind::error:
        ++errors;
        break;
      case JunitKind::skipped:
        ++skipped;
        break;
    }
  }
  // results.junit: an interrupted run is one more error, so that a JUnit reader
  // cannot take the results that ran for the whole run.
  const RunSummary sum = r.run_summary();
  const bool interrupted = sum.interrupted;
  const size_t extra = interrupted ? 1 : 0;
  std::string o = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  o += "<testsuites name=\"simtspec " + xml_escape(r.runner_name()) + "\" tests=\"" +
       std::to_string(records.size() + extra) + "\" failures=\"" + std::to_string(failures) +
       "\" errors=\"" + std::to_string(errors + extra) + "\" skipped=\"" + std::to_string(skipped) +
       "\">\n";
  if (interrupted) {
    o += "  <testsuite name=\"simtspec\" tests=\"1\" failures=\"0\" errors=\"1\" skipped=\"0\" "
         "time=\"0.000\">\n    <testcase classname=\"simtspec\" name=\"run\" time=\"0.000\">\n"
         "      <error message=\"" +
         xml_escape("interrupted" + (sum.signal.empty() ? "" : " by " + sum.signal) + ": " +
                    std::to_string(records.size()) + " of " +
                    (sum.selected ? std::to_string(*sum.selected) : "?") + " results written") +
         "\"/>\n    </testcase>\n  </testsuite>\n";
  }
  for (const auto& [feature, recs] : suites) {
    size_t f = 0, e = 0, s = 0;
    double time = 0;
    for (const Record* rec : recs) {
      JunitKind k = junit_kind(*rec);
      f += k == JunitKind::failure;
      e += k == JunitKind::error;
      s += k == JunitKind::skipped;
      time += rec->duration_ms.value_or(0) / 1000.0;
    }
    char tbuf[32];
    std::snprintf(tbuf, sizeof tbuf, "%.3f", time);
    o += "  <testsuite name=\"" + xml_escape(feature) + "\" tests=\"" +
         std::to_string(recs.size()) + "\" failures=\"" + std::to_string(f) + "\" errors=\"" +
         std::to_string(e) + "\" skipped=\"" + std::to_string(s) + "\" time=\"" + tbuf + "\">\n";
    for (const Record* rec : recs) {
      std::string name = rec->id;
      if (!rec->config_key.empty()) name += "[" + rec->config_key + "]";
      std::snprintf(tbuf, sizeof tbuf, "%.3f", rec->duration_ms.value_or(0) / 1000.0);
      o += "    <testcase classname=\"" + xml_escape(feature) + "\" name=\"" + xml_escape(name) +
           "\" file=\"" + xml_escape(rec->file) + "\" time=\"" + tbuf + "\"";
      const std::string& st = rec->status_name;
      const std::string& msg = rec->message;
      switch (junit_kind(*rec)) {
        case JunitKind::passed:
          o += "/>\n";
          continue;
        case JunitKind::failure:
          o += ">\n      <failure type=\"" + xml_escape(st) + "\" message=\"" + xml_escape(msg) +
               "\">" + xml_escape(rec->reproduce) + "</failure>\n";
          break;
        case JunitKind::error:
          o += ">\n      <error message=\"" + xml_escape(msg) + "\">" +
               xml_escape(rec->stderr_text) + "</error>\n";
          break;
        case JunitKind::skipped:
          o += ">\n      <skipped message=\"" + xml_escape(st + ": " + msg) + "\"/>\n";
          break;
      }
      o += "    </testcase>\n";
    }
    o += "  </testsuite>\n";
  }
  o += "</testsuites>\n";
  return o;
}

}  // namespace simt::reports
