# Creates (or with -Remove deletes) a shortcut in the user's Startup folder so
# ghosttype starts at login.  Run: powershell -ExecutionPolicy Bypass -File install-startup.ps1
param([switch]$Remove)
$startup = [Environment]::GetFolderPath("Startup")
$link = Join-Path $startup "ghosttype.lnk"
if ($Remove) {
    if (Test-Path $link) { Remove-Item $link }
    Write-Output "removed $link"
    exit 0
}
$exe = (Get-Command ghosttype -ErrorAction Stop).Source
$shell = New-Object -ComObject WScript.Shell
$shortcut = $shell.CreateShortcut($link)
$shortcut.TargetPath = $exe
$shortcut.Arguments = "run"
$shortcut.WindowStyle = 7  # minimized: no console window in the way
$shortcut.Description = "ghosttype: local autocomplete"
$shortcut.Save()
Write-Output "created $link -> $exe run"
