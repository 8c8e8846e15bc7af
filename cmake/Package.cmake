# find_package(Thunder) from the build tree (CMAKE_PREFIX_PATH=<build>) and
# from an install prefix (cmake --install).
include(CMakePackageConfigHelpers)

install(TARGETS thunder_core thunder EXPORT ThunderTargets
  LIBRARY DESTINATION lib ARCHIVE DESTINATION lib RUNTIME DESTINATION bin)
install(DIRECTORY include/thunder DESTINATION include)
install(EXPORT ThunderTargets NAMESPACE Thunder:: DESTINATION lib/cmake/Thunder)

configure_package_config_file(cmake/ThunderConfig.cmake.in
  ${CMAKE_BINARY_DIR}/ThunderConfig.cmake INSTALL_DESTINATION lib/cmake/Thunder)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/ThunderConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/ThunderConfig.cmake
  ${CMAKE_BINARY_DIR}/ThunderConfigVersion.cmake DESTINATION lib/cmake/Thunder)

export(EXPORT ThunderTargets NAMESPACE Thunder:: FILE ${CMAKE_BINARY_DIR}/ThunderTargets.cmake)
