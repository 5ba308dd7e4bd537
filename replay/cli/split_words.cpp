#include "split_words.h"

#include <fmt/format.h>

namespace reservoir::cli {

Expected<std::vector<std::string>> splitWords(std::string_view text) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
      continue;
    }
    in_word = true;
    if (c == '\\') {
      if (i + 1 == text.size()) return Status::usage(fmt::format("'{}': a backslash at the end escapes nothing", text));
      if (text[i + 1] != '\n') word += text[i + 1];  // backslash-newline joins lines
      ++i;
    } else if (c == '\'') {
      const auto end = text.find('\'', i + 1);
      if (end == std::string_view::npos)
        return Status::usage(fmt::format("'{}': the quote ' at character {} is not closed", text, i + 1));
      word += text.substr(i + 1, end - i - 1);
      i = end;
    } else if (c == '"') {
      std::size_t j = i + 1;
      for (; j < text.size() && text[j] != '"'; ++j) {
        if (text[j] == '\\' && j + 1 < text.size() &&
            std::string_view("\"\\$`").find(text[j + 1]) != std::string_view::npos)
          ++j;
        word += text[j];
      }
      if (j >= text.size())
        return Status::usage(fmt::format("'{}': the quote \" at character {} is not closed", text, i + 1));
      i = j;
    } else {
      word += c;
    }
  }
  if (in_word) words.push_back(std::move(word));
  return words;
}

}  // namespace reservoir::cli
