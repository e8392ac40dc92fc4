# The layers of the library, lowest first (docs/architecture.md draws them), and the folders each
# one owns. A layer's targets compile with an include path that holds only the folders of that
# layer and the layers below it, so an include that points up the layers fails to compile:
# "core/serving/engine/engine.h: No such file or directory" in a file of the runtime.
#
# The include path of each layer is a folder of symbolic links in the build tree, made at
# configure time, because every include names its header from the repository root
# ("core/runtime/tensor.h") and the root itself would let every layer see every other.
# scripts/check_layers.py applies the same table to files no target compiles (headers nothing
# includes yet, GPU kernels on a host without a GPU toolkit).
set(BATON_LAYERS runtime reference formats models serving api)
set(baton_layer_folders_runtime core/runtime)
set(baton_layer_folders_reference ops)
set(baton_layer_folders_formats core/formats)
set(baton_layer_folders_models models)
set(baton_layer_folders_serving core/serving)
set(baton_layer_folders_api core/api)
# Public headers without classes that every layer may use; the others in include/baton belong to
# the API layer.
set(BATON_PLAIN_PUBLIC_HEADERS
  chat_template_limits.h engine_stats.h error.h export.h generation.h llm_options.h
  lora_options.h option_values.h sampling_params.h structured_output.h)

# Links are made once and left in place: removing the staged folder recursively would risk
# following a link into the source tree.
function(baton_stage_link root relative)
  set(link ${root}/${relative})
  set(target ${PROJECT_SOURCE_DIR}/${relative})
  if(IS_SYMLINK ${link})
    file(READ_SYMLINK ${link} current)
    if(current STREQUAL target)
      return()
    endif()
    file(REMOVE ${link})
  endif()
  get_filename_component(parent ${link} DIRECTORY)
  file(MAKE_DIRECTORY ${parent})
  file(CREATE_LINK ${target} ${link} SYMBOLIC)
endfunction()

# Makes the include folder of `layer` (one of BATON_LAYERS, or "backend": the runtime and
# backends/) and stores its path in BATON_LAYER_INCLUDE_<layer>.
function(baton_stage_layer layer)
  set(root ${CMAKE_BINARY_DIR}/layer_includes/${layer})
  if(layer STREQUAL "backend")
    set(visible runtime)
    baton_stage_link(${root} backends)
  else()
    list(FIND BATON_LAYERS ${layer} index)
    if(index LESS 0)
      message(FATAL_ERROR "baton_stage_layer: unknown layer ${layer}")
    endif()
    list(SUBLIST BATON_LAYERS 0 ${index} visible)
    list(APPEND visible ${layer})
  endif()
  foreach(below IN LISTS visible)
    foreach(folder IN LISTS baton_layer_folders_${below})
      baton_stage_link(${root} ${folder})
    endforeach()
  endforeach()
  if(layer STREQUAL "api")
    baton_stage_link(${root} include/baton)
  else()
    foreach(header IN LISTS BATON_PLAIN_PUBLIC_HEADERS)
      baton_stage_link(${root} include/baton/${header})
    endforeach()
  endif()
  set(BATON_LAYER_INCLUDE_${layer} ${root} PARENT_SCOPE)
endfunction()

foreach(layer IN LISTS BATON_LAYERS ITEMS backend)
  baton_stage_layer(${layer})
endforeach()

# Gives `target` its layer's include path: the staged folders, and their include/ for the public
# headers as "baton/…".
function(baton_layer target layer)
  if(NOT DEFINED BATON_LAYER_INCLUDE_${layer})
    message(FATAL_ERROR "baton_layer: unknown layer ${layer} for ${target}")
  endif()
  target_include_directories(${target} PRIVATE
    ${BATON_LAYER_INCLUDE_${layer}} ${BATON_LAYER_INCLUDE_${layer}}/include)
endfunction()
