# The man page (gutf8.1) and the bash and zsh completions, generated from the built gutf8's
# --help by scripts/cli_docs.py (help2man for the man page), so that they cannot drift from it.
include(GNUInstallDirs)
if(NOT TARGET gutf8_cli)
  return()  # no CLI in this build (GUTF8_CLI=OFF, as the Python package builds): nothing to document
endif()
find_program(GUTF8_HELP2MAN help2man)
find_package(Python3 COMPONENTS Interpreter)
if(NOT GUTF8_HELP2MAN OR NOT Python3_Interpreter_FOUND)
  message(STATUS "gutf8: no help2man or python3, so no man page or completions (scripts/setup.sh installs them)")
  return()
endif()

set(GUTF8_DOC_DIR ${PROJECT_BINARY_DIR}/doc)
set(GUTF8_DOCS ${GUTF8_DOC_DIR}/gutf8.1 ${GUTF8_DOC_DIR}/gutf8.bash ${GUTF8_DOC_DIR}/_gutf8)
add_custom_command(OUTPUT ${GUTF8_DOCS}
  COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/scripts/cli_docs.py $<TARGET_FILE:gutf8_cli> ${GUTF8_DOC_DIR}
  DEPENDS gutf8_cli ${PROJECT_SOURCE_DIR}/scripts/cli_docs.py
  COMMENT "Generating gutf8.1 and the shell completions from gutf8 --help"
  VERBATIM)
add_custom_target(gutf8_cli_docs ALL DEPENDS ${GUTF8_DOCS})

install(FILES ${GUTF8_DOC_DIR}/gutf8.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES ${GUTF8_DOC_DIR}/gutf8.bash DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions
        RENAME gutf8)
install(FILES ${GUTF8_DOC_DIR}/_gutf8 DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions)
