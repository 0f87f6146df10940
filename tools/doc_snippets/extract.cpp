// tenferro-doc-snippets: turns the ```cpp blocks of one Markdown file into a
// C++ source file, so that the documentation's code is compiled with the
// library (test_doc_snippets) and cannot drift from the API.
//
//   tenferro-doc-snippets IN.md OUT.cpp ID
//
// By default consecutive blocks of a file continue one function body, the way
// a reader follows the text. HTML comments on the lines right before a fence
// change that (they do not show when the Markdown is rendered):
//   <!-- snippet: new -->          start a new function body (a fresh scope)
//   <!-- snippet: file -->         namespace-scope code (types, functions; a
//                                  main() is renamed so that it links)
//   <!-- snippet: skip, WHY -->    not compiled (say why)
//   <!-- snippet-before: CODE -->  CODE goes before the block, unseen by the
//                                  reader (the context the text implies)
//   <!-- snippet-file: CODE -->    CODE goes at namespace scope, unseen
// Namespace-scope code comes first in the generated file, then the bodies
// (which are compiled, never run).
// #include lines anywhere are hoisted to the top of the generated file.
// Exit status 1 on an unterminated fence or an unknown directive.

#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Block {
  bool file_scope = false;
  bool new_body = false;
  std::vector<std::string> before;
  std::vector<std::string> file_code;
  std::string code;
  int line = 0;
};

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return {};
  const auto e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

bool starts_with(const std::string& s, const std::string& p) {
  return s.compare(0, p.size(), p) == 0;
}

// "<!-- NAME: VALUE -->" -> VALUE, when the comment is of that name.
bool directive(const std::string& line, const std::string& name, std::string& value) {
  const std::string t = trim(line);
  const std::string open = "<!-- " + name + ":";
  if (!starts_with(t, open) || t.size() < open.size() + 4 || t.substr(t.size() - 3) != "-->") {
    return false;
  }
  value = trim(t.substr(open.size(), t.size() - open.size() - 3));
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::cerr << "usage: tenferro-doc-snippets IN.md OUT.cpp ID\n";
    return 2;
  }
  const std::string in_path = argv[1], out_path = argv[2], id = argv[3];
  std::ifstream in(in_path);
  if (!in) {
    std::cerr << in_path << ": cannot read\n";
    return 1;
  }
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);

  std::vector<Block> blocks;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (trim(lines[i]) != "```cpp") continue;
    Block b;
    b.line = static_cast<int>(i + 1);
    bool skip = false;
    // Directives: the comment lines right above the fence.
    for (std::size_t k = i; k-- > 0;) {
      std::string v;
      if (directive(lines[k], "snippet", v)) {
        if (v == "new") {
          b.new_body = true;
        } else if (v == "file") {
          b.file_scope = true;
        } else if (v == "skip" || starts_with(v, "skip,")) {
          skip = true;
        } else {
          std::cerr << in_path << ":" << k + 1 << ": unknown snippet directive '" << v << "'\n";
          return 1;
        }
      } else if (directive(lines[k], "snippet-before", v)) {
        b.before.insert(b.before.begin(), v);
      } else if (directive(lines[k], "snippet-file", v)) {
        b.file_code.insert(b.file_code.begin(), v);
      } else {
        break;
      }
    }
    std::size_t j = i + 1;
    for (; j < lines.size() && trim(lines[j]) != "```"; ++j) b.code += lines[j] + "\n";
    if (j == lines.size()) {
      std::cerr << in_path << ":" << i + 1 << ": the ```cpp fence is never closed\n";
      return 1;
    }
    i = j;
    if (!skip) blocks.push_back(std::move(b));
  }

  // Hoist includes; rename main() in file-scope code.
  std::set<std::string> includes{"#include <iostream>", "#include <tenferro/tenferro.hpp>"};
  auto strip_includes = [&](std::string& code) {
    std::istringstream is(code);
    std::string out;
    for (std::string l; std::getline(is, l);) {
      if (starts_with(trim(l), "#include")) {
        includes.insert(trim(l));
      } else {
        out += l + "\n";
      }
    }
    code = out;
  };
  for (auto& b : blocks) {
    strip_includes(b.code);
    if (b.file_scope) {
      // `auto`: a main() that ends without `return 0;` (allowed for main
      // only) deduces void instead of falling off the end of an int function.
      for (std::size_t p = b.code.find("int main("); p != std::string::npos;
           p = b.code.find("int main(", p)) {
        b.code.replace(p, 9, "auto doc_main_" + std::to_string(b.line) + "(");
      }
    }
  }

  std::ostringstream os;
  os << "// Generated from " << in_path << " by tenferro-doc-snippets; do not edit.\n";
  for (const auto& inc : includes) os << inc << "\n";
  os << "\nnamespace tf = tenferro;\nusing namespace tenferro;\n\n"
     << "namespace doc_snippets_" << id << " {\n\n";
  for (const auto& b : blocks) {
    for (const auto& c : b.file_code) os << "// " << in_path << ":" << b.line << "\n" << c << "\n";
    if (b.file_scope) os << "// " << in_path << ":" << b.line << "\n" << b.code << "\n";
  }
  int bodies = 0;
  bool open = false;
  for (const auto& b : blocks) {
    if (b.file_scope) continue;
    if (!open || b.new_body) {
      if (open) os << "}\n\n";
      os << "[[maybe_unused]] void body_" << ++bodies << "() {\n";
      open = true;
    }
    os << "// " << in_path << ":" << b.line << "\n";
    for (const auto& c : b.before) os << c << "\n";
    os << b.code;
  }
  if (open) os << "}\n";
  os << "\n}  // namespace doc_snippets_" << id << "\n\n"
     << "int doc_snippet_count_" << id << " = " << blocks.size() << ";\n";

  std::ofstream out(out_path);
  out << os.str();
  if (!out) {
    std::cerr << out_path << ": cannot write\n";
    return 1;
  }
  return 0;
}
