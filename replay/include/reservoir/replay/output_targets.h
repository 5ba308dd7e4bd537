// Which files a command may write: one rule for every front end and every command that writes
// (export's snapshot and CSV, scale's predicted trace, replay's saved recording, synth's trace,
// the GUI's export, the Python package's export).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "reservoir/core/status.h"

namespace reservoir::replay {

// A file a command reads or writes: how the front end names it ("--out", "--from", "the
// export"; empty for the one trace a command reads) and its path (empty: not given).
using NamedPath = std::pair<std::string, std::string>;

// `outputs` checked against the traces a command reads (`inputs`, each with the capture JSON
// beside it, read or not) and against each other. An output that is an input, an input's capture
// JSON, or the same regular file as another output would lose data without a word; "-" is no
// file (standard output or input are not written here). Each is a usage error naming the
// output's label: "--out X is the trace being read (--measured): write to another file". Paths
// are compared as the files they name (links followed, "./" and ".." resolved), whether they
// exist yet or not; a device (/dev/null) may take several outputs. A path with a NUL byte names
// no file (the system would cut it there) and is refused too. `read_too`: other files the command
// reads ({what it is, path}: "the capture JSON the trace was read with"), refused as outputs.
Status checkOutputTargets(const std::vector<NamedPath>& inputs, const std::vector<NamedPath>& outputs,
                          const std::vector<NamedPath>& read_too = {});

}  // namespace reservoir::replay
