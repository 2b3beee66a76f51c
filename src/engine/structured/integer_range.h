// integerRange: the decimal spellings (no leading zeros, no "-0") of exactly the integers in
// [lo, hi], as grammar sequences: digit by digit, a prefix shared by both ends is fixed, then the
// first digit splits the range into "lo's digit, the rest from lo's tail up", "the digits between,
// anything after" and "hi's digit, the rest up to hi's tail" (the construction llama.cpp's
// json-schema-to-grammar uses for minimum/maximum, written here from the idea).
#pragma once

#include "engine/structured/grammar.h"

#include <cstdint>
#include <vector>

namespace brook::structured {

// |lo|, |hi| < 10^18.
std::vector<GrammarSequence> integerRange(GrammarBuilder& builder, int64_t lo, int64_t hi);

}  // namespace brook::structured
