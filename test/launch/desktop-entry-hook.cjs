// electron-builder's afterPack hook for the packaging test (test/launch/first-launch.test.ts): `--dir` writes no
// .desktop file, so this writes the one the deb would get, computed by electron-builder's own code (LinuxTargetHelper,
// as FpmTarget calls it, with the linux and deb options), to deb.desktop in the output folder.
const { writeFileSync } = require('node:fs')
const { join } = require('node:path')

exports.default = async function desktopEntry(context) {
  if (context.electronPlatformName !== 'linux') return
  const { LinuxTargetHelper } = require('app-builder-lib/out/targets/LinuxTargetHelper')
  const { packager } = context
  const options = { ...packager.platformSpecificBuildOptions, ...(packager.config.deb ?? {}) }
  writeFileSync(join(context.outDir, 'deb.desktop'), await new LinuxTargetHelper(packager).computeDesktopEntry(options))
}
