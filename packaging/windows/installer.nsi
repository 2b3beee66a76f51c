; Brook's Windows installer (NSIS 3, 64-bit). Built by packaging/windows/cross-build.sh on Linux
; and by the GitHub Actions workflow on Windows, from a staged install tree:
;   makensis -DSTAGE=<dir> -DVERSION=<x.y.z> -DOUTFILE=<setup.exe> -DFILELIST=<dir> installer.nsi
; STAGE holds bin\ (programs, Qt and MinGW DLLs, Qt plugins) and share\brook\. FILELIST holds
; install-files.nsh and uninstall-files.nsh (packaging/windows/nsis-file-lists.sh): the uninstaller
; removes exactly the files it installed, never a folder the user chose with other things in it,
; and never the user's data (%APPDATA%\Brook, %LOCALAPPDATA%\Brook, the Hugging Face cache).
Unicode true
; makensis makes a 32-bit installer by default; it would install into the 32-bit view of the
; registry and Program Files (x86), and under a 64-bit-only Wine it does nothing at all.
Target amd64-unicode
SetCompressor /SOLID lzma
ManifestDPIAware true

!ifndef STAGE
  !error "define STAGE: the staged install tree"
!endif
!ifndef VERSION
  !error "define VERSION"
!endif
!ifndef OUTFILE
  !define OUTFILE "brook-${VERSION}-win64-setup.exe"
!endif
!ifndef FILELIST
  !define FILELIST "${STAGE}\.."
!endif

!define APP_NAME "Brook"
!define PUBLISHER "Brook developers"
!define UNINSTALL_KEY "Software\Microsoft\Windows\CurrentVersion\Uninstall\Brook"

Name "${APP_NAME} ${VERSION}"
OutFile "${OUTFILE}"
InstallDir "$PROGRAMFILES64\${APP_NAME}"
InstallDirRegKey HKLM "${UNINSTALL_KEY}" "InstallLocation"
RequestExecutionLevel admin
BrandingText "${APP_NAME} ${VERSION}"

!include "MUI2.nsh"
!include "x64.nsh"

!define MUI_ICON "${__FILEDIR__}\brook.ico"
!define MUI_UNICON "${__FILEDIR__}\brook.ico"
!define MUI_ABORTWARNING
!define MUI_FINISHPAGE_RUN "$INSTDIR\bin\brook.exe"
!insertmacro MUI_PAGE_WELCOME
!insertmacro MUI_PAGE_DIRECTORY
!insertmacro MUI_PAGE_INSTFILES
!insertmacro MUI_PAGE_FINISH
!insertmacro MUI_UNPAGE_CONFIRM
!insertmacro MUI_UNPAGE_INSTFILES
!insertmacro MUI_LANGUAGE "English"
!insertmacro MUI_LANGUAGE "SimpChinese"

LangString StartMenuUninstall ${LANG_ENGLISH} "Uninstall Brook"
LangString StartMenuUninstall ${LANG_SIMPCHINESE} "卸载 Brook"
LangString Needs64Bit ${LANG_ENGLISH} "Brook needs 64-bit Windows."
LangString Needs64Bit ${LANG_SIMPCHINESE} "Brook 需要 64 位 Windows。"

Function .onInit
  ${IfNot} ${RunningX64}
    MessageBox MB_ICONSTOP "$(Needs64Bit)" /SD IDOK
    Abort
  ${EndIf}
  SetRegView 64
  SetShellVarContext all
FunctionEnd

Function un.onInit
  SetRegView 64
  SetShellVarContext all
FunctionEnd

Section "Brook" SecMain
  SectionIn RO
  !include "${FILELIST}\install-files.nsh"
  WriteUninstaller "$INSTDIR\uninstall.exe"

  CreateDirectory "$SMPROGRAMS\${APP_NAME}"
  CreateShortcut "$SMPROGRAMS\${APP_NAME}\${APP_NAME}.lnk" "$INSTDIR\bin\brook.exe" "" "$INSTDIR\bin\brook.exe" 0
  CreateShortcut "$SMPROGRAMS\${APP_NAME}\$(StartMenuUninstall).lnk" "$INSTDIR\uninstall.exe"
  CreateShortcut "$DESKTOP\${APP_NAME}.lnk" "$INSTDIR\bin\brook.exe" "" "$INSTDIR\bin\brook.exe" 0

  WriteRegStr HKLM "${UNINSTALL_KEY}" "DisplayName" "${APP_NAME}"
  WriteRegStr HKLM "${UNINSTALL_KEY}" "DisplayVersion" "${VERSION}"
  WriteRegStr HKLM "${UNINSTALL_KEY}" "Publisher" "${PUBLISHER}"
  WriteRegStr HKLM "${UNINSTALL_KEY}" "DisplayIcon" "$INSTDIR\bin\brook.exe"
  WriteRegStr HKLM "${UNINSTALL_KEY}" "InstallLocation" "$INSTDIR"
  WriteRegStr HKLM "${UNINSTALL_KEY}" "UninstallString" '"$INSTDIR\uninstall.exe"'
  WriteRegStr HKLM "${UNINSTALL_KEY}" "QuietUninstallString" '"$INSTDIR\uninstall.exe" /S'
  WriteRegDWORD HKLM "${UNINSTALL_KEY}" "NoModify" 1
  WriteRegDWORD HKLM "${UNINSTALL_KEY}" "NoRepair" 1
  !include "${FILELIST}\size.nsh"
  WriteRegDWORD HKLM "${UNINSTALL_KEY}" "EstimatedSize" ${INSTALLED_SIZE_KB}
SectionEnd

Section "Uninstall"
  Delete "$DESKTOP\${APP_NAME}.lnk"
  Delete "$SMPROGRAMS\${APP_NAME}\${APP_NAME}.lnk"
  Delete "$SMPROGRAMS\${APP_NAME}\$(StartMenuUninstall).lnk"
  RMDir "$SMPROGRAMS\${APP_NAME}"
  !include "${FILELIST}\uninstall-files.nsh"
  Delete "$INSTDIR\uninstall.exe"
  RMDir "$INSTDIR"
  DeleteRegKey HKLM "${UNINSTALL_KEY}"
SectionEnd
