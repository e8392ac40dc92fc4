# Writes OUTPUT, a C++ file defining baton::cli::build_commit(), with the source tree's git commit
# (or "unknown" outside a git checkout), and leaves the file untouched when the commit has not
# changed so that nothing rebuilds.
execute_process(
  COMMAND git -C ${SOURCE_DIR} describe --always --dirty --abbrev=10
  OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE failed)
if(failed OR commit STREQUAL "")
  set(commit unknown)
endif()
set(text "namespace baton::cli {\nconst char* build_commit() { return \"${commit}\"; }\n}  // namespace baton::cli\n")
if(EXISTS ${OUTPUT})
  file(READ ${OUTPUT} previous)
  if(previous STREQUAL text)
    return()
  endif()
endif()
file(WRITE ${OUTPUT} "${text}")
