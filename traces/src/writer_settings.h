// allocator_settings for the snapshot writer: the typed RecordedSettings back into torch's dict.
#pragma once

#include "reservoir/traces/snapshot.h"
#include "writer_pickler.h"

namespace reservoir::traces::detail {

// Writes the allocator_settings dict (keys in the order torch writes them).
void writeSettings(Pickler& p, const RecordedSettings& settings);

}  // namespace reservoir::traces::detail
