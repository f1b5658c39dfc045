@echo off
:: The `switchboard` command of an installed Switchboard (Windows): the app's own Electron runs the command's
:: bundle (out\main\cli.js) as Node (ELECTRON_RUN_AS_NODE), from inside app.asar. This file is
:: <app>\resources\bin\switchboard.cmd; "Install the switchboard Command" puts its folder on the user's PATH.
setlocal
set ELECTRON_RUN_AS_NODE=1
set NODE_OPTIONS=
"%~dp0..\..\Switchboard.exe" "%~dp0..\app.asar\out\main\cli.js" %*
endlocal & exit /b %ERRORLEVEL%
