# What `cmake --install` lays out and how CPack turns it into installers (docs/packaging.md):
#   Linux:   DEB (system Qt, dependencies from dpkg-shlibdeps) and TGZ (relocatable: Qt, its plugins
#            and every non-base library bundled by packaging/linux/bundle-qt.cmake, rpath $ORIGIN/../lib)
#   Windows: NSIS (windeployqt at install time, CUDA/vcpkg DLLs from the runtime dependency set) + ZIP
# One tree serves all of them: bin/, lib/ (private libraries only), share/{applications,icons,
# metainfo,doc}, lib/systemd/user. The executables carry an RPATH (not RUNPATH) of $ORIGIN/../lib,
# because only an RPATH also applies to the dependencies of libraries and of dlopen()ed Qt plugins.
include(GNUInstallDirs)

# Placeholders until the project has a domain and a public home: the app id names the .desktop
# file, the icon and the AppStream component; change all three here, nowhere else.
set(BROOK_APP_ID "io.github.brook_llm.Brook" CACHE STRING "Reverse-DNS application id (desktop file, icon, AppStream)")
set(BROOK_HOMEPAGE "https://github.com/brook-llm/brook" CACHE STRING "Project homepage (AppStream, installers)")
set(BROOK_MAINTAINER "Brook developers <brook@example.org>" CACHE STRING "Package maintainer (DEB)")
option(BROOK_BUNDLE_CUDA_RUNTIME "Install the CUDA runtime and cuBLAS libraries next to Brook (lib/brook)" ${BROOK_WITH_CUDA})

set(_brook_pkg_dir ${PROJECT_SOURCE_DIR}/packaging)
set(_brook_docdir ${CMAKE_INSTALL_DATAROOTDIR}/doc/brook)  # Debian policy: the package's name, lower case
set(BROOK_INSTALLED_PROGRAMS brook-serve brook-run brook-bench brook-quantize brook-make-test-model)
if(BROOK_WITH_GUI)
  list(PREPEND BROOK_INSTALLED_PROGRAMS brook)
endif()
# brook-make-test-model trains its tokenizer on share/brook/test-corpus, installed below.

# --- programs ---------------------------------------------------------------------------------
set(_brook_rpath "$ORIGIN/../lib")
if(BROOK_WITH_CUDA AND BROOK_BUNDLE_CUDA_RUNTIME AND NOT WIN32)
  list(APPEND _brook_rpath "$ORIGIN/../lib/brook")
endif()
foreach(_program IN LISTS BROOK_INSTALLED_PROGRAMS)
  if(NOT WIN32 AND NOT APPLE)
    set_target_properties(${_program} PROPERTIES INSTALL_RPATH "${_brook_rpath}")
    target_link_options(${_program} PRIVATE "LINKER:--disable-new-dtags")
  endif()
endforeach()
# A cross build (packaging/windows/cross-build.sh) deploys its DLLs with deploy-dlls.sh instead:
# CMake resolves runtime dependencies only for the platform it runs on, and windeployqt is a
# Windows program.
set(_brook_windows_native_deploy FALSE)
if(WIN32 AND NOT CMAKE_CROSSCOMPILING)
  set(_brook_windows_native_deploy TRUE)
endif()
if(_brook_windows_native_deploy)
  install(TARGETS ${BROOK_INSTALLED_PROGRAMS} RUNTIME_DEPENDENCY_SET brook_runtime_dlls)
else()
  install(TARGETS ${BROOK_INSTALLED_PROGRAMS})
endif()
# Texts read at run time, found relative to the executable (src/platform/resource_path.h):
# <prefix>/share/brook/calibration/ (brook-quantize's calibration, brook-bench quality's
# evaluation) and share/brook/test-corpus/ (the tokenizer brook-make-test-model and
# brook-bench --random-weights train).
install(FILES ${PROJECT_SOURCE_DIR}/resources/calibration/calibration.txt
              ${PROJECT_SOURCE_DIR}/resources/calibration/evaluation.txt
        DESTINATION ${CMAKE_INSTALL_DATADIR}/brook/calibration)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/resources/test-corpus/
        DESTINATION ${CMAKE_INSTALL_DATADIR}/brook/test-corpus FILES_MATCHING PATTERN "*.txt")

# --- Linux desktop integration ----------------------------------------------------------------
if(UNIX AND NOT APPLE)
  set(_brook_gen ${PROJECT_BINARY_DIR}/packaging)
  configure_file(${_brook_pkg_dir}/linux/brook.desktop.in ${_brook_gen}/${BROOK_APP_ID}.desktop @ONLY)
  configure_file(${_brook_pkg_dir}/linux/brook.metainfo.xml.in ${_brook_gen}/${BROOK_APP_ID}.metainfo.xml @ONLY)
  if(BROOK_WITH_GUI)
    install(FILES ${_brook_gen}/${BROOK_APP_ID}.desktop DESTINATION ${CMAKE_INSTALL_DATADIR}/applications)
    install(FILES ${_brook_gen}/${BROOK_APP_ID}.metainfo.xml DESTINATION ${CMAKE_INSTALL_DATADIR}/metainfo)
    install(FILES ${PROJECT_SOURCE_DIR}/resources/icons/brook.svg
            DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/scalable/apps RENAME ${BROOK_APP_ID}.svg)
    foreach(_size 16 22 24 32 48 64 128 256 512)
      install(FILES ${PROJECT_SOURCE_DIR}/resources/icons/png/brook-${_size}.png
              DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/${_size}x${_size}/apps RENAME ${BROOK_APP_ID}.png)
    endforeach()
  endif()

  # The user unit's ExecStart needs the final path of brook-serve, known only at install time
  # (a DEB stages with DESTDIR and the real prefix; the TGZ bundler rewrites it for the tarball).
  install(CODE "
    file(READ \"${_brook_pkg_dir}/linux/brook-serve.service.in\" _unit)
    string(REPLACE \"@BROOK_SERVE@\" \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}/brook-serve\" _unit \"\${_unit}\")
    file(WRITE \"${_brook_gen}/brook-serve.service\" \"\${_unit}\")
    file(INSTALL DESTINATION \"\${CMAKE_INSTALL_PREFIX}/lib/systemd/user\" TYPE FILE FILES \"${_brook_gen}/brook-serve.service\")
  ")
  install(FILES ${_brook_pkg_dir}/linux/serve.example.yaml DESTINATION ${_brook_docdir}/examples)

  # Debian policy files: copyright and a gzip -9n changelog (no timestamp: reproducible).
  install(FILES ${_brook_pkg_dir}/linux/copyright DESTINATION ${_brook_docdir})
  install(CODE "
    execute_process(COMMAND gzip -9nc \"${_brook_pkg_dir}/linux/changelog\"
                    OUTPUT_FILE \"${_brook_gen}/changelog.gz\" RESULT_VARIABLE _rc)
    if(_rc)
      message(FATAL_ERROR \"gzip of packaging/linux/changelog failed\")
    endif()
    file(INSTALL DESTINATION \"\${CMAKE_INSTALL_PREFIX}/${_brook_docdir}\" TYPE FILE FILES \"${_brook_gen}/changelog.gz\")
  ")

  # CUDA runtime and cuBLAS: redistributable, private to Brook, so a CUDA build still starts (and
  # picks the CPU backend) on a machine without the CUDA toolkit or a GPU.
  if(BROOK_WITH_CUDA AND BROOK_BUNDLE_CUDA_RUNTIME)
    foreach(_lib cudart cublas cublasLt)
      file(GLOB _files "${CUDAToolkit_LIBRARY_DIR}/lib${_lib}.so.*")
      install(FILES ${_files} DESTINATION lib/brook)
    endforeach()
  endif()
endif()

# --- Windows: Qt via windeployqt, other DLLs from the runtime dependency set -------------------
if(WIN32)
  # UTF-8 as the process code page, DPI awareness, long paths (packaging/windows/brook.exe.manifest).
  # MSVC merges .manifest sources into the manifest its linker writes; MinGW embeds it as a resource.
  foreach(_program IN LISTS BROOK_INSTALLED_PROGRAMS)
    if(MSVC)
      target_sources(${_program} PRIVATE ${_brook_pkg_dir}/windows/brook.exe.manifest)
    else()
      target_sources(${_program} PRIVATE ${_brook_pkg_dir}/windows/manifest.rc)
    endif()
  endforeach()
  if(BROOK_WITH_GUI)
    set_target_properties(brook PROPERTIES WIN32_EXECUTABLE ON)
    target_sources(brook PRIVATE ${_brook_pkg_dir}/windows/brook.rc)
  endif()
endif()
if(_brook_windows_native_deploy)
  set(_dll_dirs "")
  if(BROOK_WITH_CUDA)
    list(APPEND _dll_dirs "${CUDAToolkit_BIN_DIR}" "${CUDAToolkit_BIN_DIR}/x64")
  endif()
  if(DEFINED VCPKG_INSTALLED_DIR AND DEFINED VCPKG_TARGET_TRIPLET)
    list(APPEND _dll_dirs "${VCPKG_INSTALLED_DIR}/${VCPKG_TARGET_TRIPLET}/bin")
  endif()
  install(RUNTIME_DEPENDENCY_SET brook_runtime_dlls
    DIRECTORIES ${_dll_dirs}
    PRE_EXCLUDE_REGEXES "^api-ms-" "^ext-ms-" "^Qt6" "^nvcuda"
    POST_EXCLUDE_REGEXES "[/\\\\][Ss]ystem32[/\\\\]" "[/\\\\]Qt[/\\\\]")
  set(CMAKE_INSTALL_UCRT_LIBRARIES ON)
  include(InstallRequiredSystemLibraries)  # the MSVC runtime, app-local
  if(BROOK_WITH_GUI)
    get_target_property(_qmake Qt6::qmake IMPORTED_LOCATION)
    get_filename_component(_qt_bin "${_qmake}" DIRECTORY)
    find_program(BROOK_WINDEPLOYQT windeployqt HINTS "${_qt_bin}" REQUIRED)
    install(CODE "
      execute_process(COMMAND \"${BROOK_WINDEPLOYQT}\" --release --no-compiler-runtime --translations en,zh_CN
                              \"\${CMAKE_INSTALL_PREFIX}/bin/brook.exe\" RESULT_VARIABLE _rc)
      if(_rc)
        message(FATAL_ERROR \"windeployqt failed (\${_rc})\")
      endif()
    ")
  endif()
endif()

# --- CPack ------------------------------------------------------------------------------------
set(CPACK_PACKAGE_NAME brook)
set(CPACK_PACKAGE_VENDOR "Brook")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Run small LLMs (ERNIE 4.5) on your own GPU or CPU")
set(CPACK_PACKAGE_DESCRIPTION_FILE ${_brook_pkg_dir}/description.txt)
set(CPACK_PACKAGE_HOMEPAGE_URL ${BROOK_HOMEPAGE})
set(CPACK_PACKAGE_CONTACT ${BROOK_MAINTAINER})
set(CPACK_PACKAGE_INSTALL_DIRECTORY "Brook")
set(CPACK_PACKAGE_EXECUTABLES "brook;Brook")
set(CPACK_STRIP_FILES ON)
set(CPACK_SYSTEM_NAME "${CMAKE_SYSTEM_NAME}-${CMAKE_SYSTEM_PROCESSOR}")
if(BROOK_WITH_CUDA)
  string(APPEND CPACK_SYSTEM_NAME "-cuda")
endif()
set(CPACK_PRE_BUILD_SCRIPTS ${_brook_pkg_dir}/linux/bundle-qt.cmake)

# DEB: Debian 12 / Ubuntu 24.04 names come from dpkg-shlibdeps on the machine that builds it, so
# build the .deb on the distribution it is for; plugins are not linked, so name their packages.
set(CPACK_DEBIAN_PACKAGE_NAME brook)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS "usr/lib/brook")
if(BROOK_WITH_GUI)
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "libqt6sql6-sqlite")
  # A font with Chinese glyphs: the zh_CN interface and Chinese chat show as empty boxes without
  # one, and a minimal Debian or Ubuntu install has none. Recommends, so apt installs it by
  # default, and any of the three serves.
  set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "qt6-translations-l10n, fonts-noto-cjk | fonts-wqy-microhei | fonts-wqy-zenhei")
endif()

# TGZ: the relocatable tarball (packaging/linux/bundle-qt.cmake fills in Qt and the libraries).
set(CPACK_ARCHIVE_THREADS 0)
set(CPACK_BROOK_QT_PLUGIN_DIR "${QT6_INSTALL_PREFIX}/${QT6_INSTALL_PLUGINS}")
set(CPACK_BROOK_QT_TRANSLATIONS_DIR "${QT6_INSTALL_PREFIX}/${QT6_INSTALL_TRANSLATIONS}")
set(CPACK_BROOK_BASE_LIBRARIES "${_brook_pkg_dir}/linux/base-libraries.txt")

# NSIS (Windows): Start-menu entries for the app and the uninstaller, optional PATH entry for
# brook-serve, the previous version uninstalled first.
set(CPACK_NSIS_PACKAGE_NAME "Brook")
set(CPACK_NSIS_DISPLAY_NAME "Brook ${PROJECT_VERSION}")
set(CPACK_NSIS_MUI_ICON ${_brook_pkg_dir}/windows/brook.ico)
set(CPACK_NSIS_MUI_UNIICON ${_brook_pkg_dir}/windows/brook.ico)
set(CPACK_NSIS_INSTALLED_ICON_NAME "bin\\\\brook.exe")
set(CPACK_NSIS_EXECUTABLES_DIRECTORY bin)
set(CPACK_NSIS_MUI_FINISHPAGE_RUN brook.exe)
set(CPACK_NSIS_ENABLE_UNINSTALL_BEFORE_INSTALL ON)
set(CPACK_NSIS_MODIFY_PATH ON)
set(CPACK_NSIS_IGNORE_LICENSE_PAGE ON)
set(CPACK_NSIS_MANIFEST_DPI_AWARE ON)
set(CPACK_NSIS_URL_INFO_ABOUT ${BROOK_HOMEPAGE})
set(CPACK_NSIS_CONTACT ${BROOK_MAINTAINER})
set(CPACK_CREATE_DESKTOP_LINKS brook)

if(WIN32)
  set(CPACK_GENERATOR NSIS ZIP)
else()
  set(CPACK_GENERATOR DEB TGZ)
endif()
include(CPack)
