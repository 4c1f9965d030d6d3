# bash completion for tandem: subcommands, and each subcommand's options as its own --help
# lists them (so they never drift from the binary); model names after --hw, --hw-a, --hw-b
# and `models show|diff`; pipelines after --passes, --a, --b; files elsewhere.
_tandem() {
  local cur prev words cword
  _init_completion -n = || return
  local tandem=${words[0]}
  local sub="" i
  for ((i = 1; i < cword; i++)); do
    case ${words[i]} in
      -*) ;;
      *) sub=${words[i]}; break ;;
    esac
  done
  local models
  models=$("$tandem" models dirs 2>/dev/null | while read -r d; do ls "$d" 2>/dev/null; done | sed -n 's/\.yaml$//p' | sort -u)
  case $prev in
    --hw|--hw-a|--hw-b)
      COMPREPLY=($(compgen -W "$models" -- "$cur"))
      _filedir yaml
      return ;;
    --passes|--a|--b)
      COMPREPLY=($(compgen -W "none default auto compiler" -- "$cur"))
      return ;;
    -o|--output|--trace|--report|--csv|--log|--space|--asm)
      _filedir
      return ;;
  esac
  if [[ -z $sub ]]; then
    COMPREPLY=($(compgen -W "$("$tandem" --help 2>/dev/null | sed -n '/^Subcommands:/,$s/^  \([a-z]*\) .*/\1/p') --help --version --log-level" -- "$cur"))
    return
  fi
  if [[ $sub == models ]]; then
    if [[ ${words[cword - 1]} == models ]]; then
      COMPREPLY=($(compgen -W "dirs show diff" -- "$cur"))
    else
      COMPREPLY=($(compgen -W "$models" -- "$cur"))
      _filedir yaml
    fi
    return
  fi
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$("$tandem" "$sub" --help 2>/dev/null | grep -oE -- '--[a-z][a-z-]*' | sort -u)" -- "$cur"))
    return
  fi
  _filedir
}
complete -F _tandem tandem
