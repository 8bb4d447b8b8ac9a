include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS gutf8 gutf8_prim EXPORT gutf8Targets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
if(GUTF8_CLI)
  install(TARGETS gutf8_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
install(DIRECTORY include/gutf8 DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        PATTERN "*.in" EXCLUDE)
install(FILES ${PROJECT_BINARY_DIR}/include/gutf8/version.hpp
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/gutf8)
install(EXPORT gutf8Targets NAMESPACE gutf8:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/gutf8)
configure_package_config_file(cmake/gutf8Config.cmake.in
  ${PROJECT_BINARY_DIR}/gutf8Config.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/gutf8)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/gutf8ConfigVersion.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/gutf8Config.cmake ${PROJECT_BINARY_DIR}/gutf8ConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/gutf8)
