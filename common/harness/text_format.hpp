#pragma once
// Small text helpers for the course's reports (the lesson executables' JSON and tables, make
// device): a number in a printf format, and a string made safe inside a JSON string.

#include <cstdio>
#include <string>

namespace gemm {

// `value` as `format` prints it ("%.1f", "%g"); at most 63 characters.
inline std::string format_number(const char* format, double value) {
  char text[64];
  std::snprintf(text, sizeof(text), format, value);
  return text;
}

// `text` for the inside of a JSON string: quotes and backslashes escaped, control characters
// dropped.
inline std::string json_escape(const std::string& text) {
  std::string escaped;
  for (char c : text) {
    if (c == '"' || c == '\\') escaped += '\\';
    if (static_cast<unsigned char>(c) >= 0x20) escaped += c;
  }
  return escaped;
}

}  // namespace gemm
