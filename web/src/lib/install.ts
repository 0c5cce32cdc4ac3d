// The install commands of an enrollment key: the enrolment call an agent makes (POST /api/v1/agents/enroll with the
// key and the host's facts), then its first report (POST /api/v1/agents/inventory), so the device shows in the console
// at once. One shell script for Linux and macOS, one PowerShell script for Windows, and the bare call as curl.
// Pure functions: the console shows them, and the tests run the Linux script as it is shown.

export type InstallTarget = 'linux' | 'macos' | 'windows' | 'curl';

export interface InstallInput {
  /** The server's origin, e.g. https://gatehouse.example.com */
  server: string;
  /** The enrollment key, shown once. */
  key: string;
}

/** A value inside single quotes, for POSIX shells and PowerShell alike ('' in PowerShell, '\'' in sh). */
const sh = (v: string) => `'${v.replace(/'/g, `'\\''`)}'`;
const ps = (v: string) => `'${v.replace(/'/g, "''")}'`;

function shellScript({ server, key }: InstallInput, os: 'linux' | 'macos') {
  const facts =
    os === 'linux'
      ? [
          `os_version=$( (. /etc/os-release && printf '%s' "$PRETTY_NAME") 2>/dev/null || uname -r)`,
          `memory_kb=$(awk '/^MemTotal:/ {print $2}' /proc/meminfo 2>/dev/null || true)`,
        ]
      : [
          `os_version="macOS $(sw_vers -productVersion 2>/dev/null || uname -r)"`,
          `memory_kb=$(( $(sysctl -n hw.memsize 2>/dev/null || echo 0) / 1024 ))`,
        ];
  return `#!/bin/sh
# Enrols this ${os === 'linux' ? 'Linux' : 'macOS'} host with Gatehouse and sends its first report.
# Needs curl. GATEHOUSE_AGENT_DIR chooses where the agent token is kept (default /etc/gatehouse-agent);
# GATEHOUSE_AGENT_VERSION is the agent's version, when an agent package runs this.
set -eu
GATEHOUSE_URL=${sh(server)}
ENROLLMENT_KEY=${sh(key)}
AGENT_DIR="\${GATEHOUSE_AGENT_DIR:-/etc/gatehouse-agent}"

# JSON string content: backslashes and quotes escaped, control characters dropped.
json() { printf '%s' "$1" | tr -d '\\000-\\037' | sed -e 's/\\\\/\\\\\\\\/g' -e 's/"/\\\\"/g'; }

host=$(hostname)
${facts.join('\n')}
version=""
if [ -n "\${GATEHOUSE_AGENT_VERSION:-}" ]; then version=",\\"agentVersion\\":\\"$(json "$GATEHOUSE_AGENT_VERSION")\\""; fi

answer=$(curl -sS -X POST "$GATEHOUSE_URL/api/v1/agents/enroll" -H 'content-type: application/json' \\
  --data "{\\"enrollmentKey\\":\\"$ENROLLMENT_KEY\\",\\"hostname\\":\\"$(json "$host")\\",\\"osType\\":\\"${os}\\",\\"osVersion\\":\\"$(json "$os_version")\\"$version}")
token=$(printf '%s' "$answer" | sed -n 's/.*"agentToken":"\\([^"]*\\)".*/\\1/p')
device=$(printf '%s' "$answer" | sed -n 's/.*"deviceId":"\\([^"]*\\)".*/\\1/p')
[ -n "$token" ] || { echo "Enrolment failed: $answer" >&2; exit 1; }

mkdir -p "$AGENT_DIR"
(umask 077 && printf '%s\\n' "$token" > "$AGENT_DIR/agent-token")

curl -fsS -X POST "$GATEHOUSE_URL/api/v1/agents/inventory" -H "authorization: Bearer $token" \\
  -H 'content-type: application/json' \\
  --data "{\\"hardware\\":{\\"hostname\\":\\"$(json "$host")\\",\\"kernel\\":\\"$(json "$(uname -r)")\\",\\"architecture\\":\\"$(json "$(uname -m)")\\",\\"memoryKb\\":\\"$(json "\${memory_kb:-}")\\"},\\"software\\":[],\\"patches\\":[]}" >/dev/null

echo "Enrolled $host as device $device"
`;
}

function powerShell({ server, key }: InstallInput) {
  return `# Enrols this Windows host with Gatehouse and sends its first report (PowerShell 5.1 or later, as administrator).
$ErrorActionPreference = 'Stop'
$server = ${ps(server)}
$key = ${ps(key)}
$os = Get-CimInstance Win32_OperatingSystem
$enrol = @{ enrollmentKey = $key; hostname = $env:COMPUTERNAME; osType = 'windows'; osVersion = "$($os.Caption) $($os.Version)" }
$answer = Invoke-RestMethod -Method Post -Uri "$server/api/v1/agents/enroll" -ContentType 'application/json' -Body ($enrol | ConvertTo-Json)
$dir = Join-Path $env:ProgramData 'Gatehouse'
New-Item -ItemType Directory -Force -Path $dir | Out-Null
Set-Content -Path (Join-Path $dir 'agent-token') -Value $answer.agentToken
$report = @{ hardware = @{ hostname = $env:COMPUTERNAME; architecture = $env:PROCESSOR_ARCHITECTURE; memoryKb = [string]($os.TotalVisibleMemorySize) }; software = @(); patches = @() }
Invoke-RestMethod -Method Post -Uri "$server/api/v1/agents/inventory" -Headers @{ Authorization = "Bearer $($answer.agentToken)" } -ContentType 'application/json' -Body ($report | ConvertTo-Json -Depth 4) | Out-Null
Write-Host "Enrolled $env:COMPUTERNAME as device $($answer.deviceId)"
`;
}

function curl({ server, key }: InstallInput) {
  return `curl -X POST ${sh(`${server}/api/v1/agents/enroll`)} -H 'content-type: application/json' \\
  -d "{\\"enrollmentKey\\":\\"${key}\\",\\"hostname\\":\\"$(hostname)\\",\\"osType\\":\\"linux\\"}"
`;
}

/** The command or script for one target. */
export function installCommand(target: InstallTarget, input: InstallInput): string {
  if (target === 'windows') return powerShell(input);
  if (target === 'curl') return curl(input);
  return shellScript(input, target);
}

export const INSTALL_TARGETS: { value: InstallTarget; label: string; file: string }[] = [
  { value: 'windows', label: 'Windows (PowerShell)', file: 'enrol-gatehouse.ps1' },
  { value: 'macos', label: 'macOS', file: 'enrol-gatehouse.sh' },
  { value: 'linux', label: 'Linux', file: 'enrol-gatehouse.sh' },
  { value: 'curl', label: 'curl', file: 'enrol-gatehouse.txt' },
];
