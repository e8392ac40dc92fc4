#pragma once

#include "core/api/loaded_model.h"
#include "core/runtime/comm/communicator.h"

namespace baton {

// On the first rank of a data-parallel replica other than rank 0's: runs the replica's engine on
// the requests the router (rank 0 of `leaders`) sends, answering each of its turns with the
// updates made since the last one, until the router ends the run. Throws when the router cannot
// be reached within the timeout.
void serve_router_requests(const LoadedModel& loaded, Communicator& leaders);

}  // namespace baton
