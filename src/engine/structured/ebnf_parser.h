// EBNF grammars (vLLM's structured_outputs.grammar, in the GBNF/XGrammar dialect):
//
//   root   ::= answer ("," ws answer)*      # the start rule is called root
//   answer ::= "yes" | "no" | [0-9]+
//   ws     ::= [ \t\n]*
//
// Terminals: "strings" with \" \\ \n \t \r \xHH \uHHHH escapes, character classes [a-z] [^"]
// (the regex compiler's), "." (any character); grouping ( ), alternatives |, and the quantifiers
// * + ? {n} {n,} {n,m}. Comments run from # to the end of a line. Rules may be used before they
// are defined and may recurse, except on their own left edge (A ::= A "x").
#pragma once

#include "engine/structured/grammar.h"

#include <memory>
#include <string>
#include <string_view>

namespace brook::structured {

Result<std::shared_ptr<const Grammar>> compileEbnf(std::string_view text, const std::string& field,
                                                   const GrammarLimits& limits = {});

}  // namespace brook::structured
