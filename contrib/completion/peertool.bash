# bash completion for peertool (installed as
# $(PREFIX)/share/bash-completion/completions/peertool). Commands and
# options come from peertool's own help, so they follow the binary.

_peertool_commands()
{
	"$1" help 2>/dev/null |
		awk '/^Commands/ { f = 1; next } f && /^$/ { exit } f && /^  [a-z]/ { print $1 }'
}

# Without the bash-completion package: the words as bash splits them.
_peertool_init()
{
	if declare -F _init_completion >/dev/null; then
		_init_completion -n =
		return
	fi
	# bash splits "--key=val" into "--key" "=" "val": join them back
	local i w joining=0
	words=()
	cword=0
	for ((i = 0; i < ${#COMP_WORDS[@]}; i++)); do
		w=${COMP_WORDS[i]}
		if [[ $w == = && ${#words[@]} -gt 0 ]]; then
			words[${#words[@]} - 1]+="="
			joining=1
		elif ((joining)); then
			words[${#words[@]} - 1]+="$w"
			joining=0
		else
			words+=("$w")
		fi
		((i == COMP_CWORD)) && cword=$((${#words[@]} - 1))
	done
	cur=${words[cword]}
	prev=${words[cword - 1]}
}

_peertool_files()
{
	if declare -F _filedir >/dev/null; then
		_filedir "$@"
	elif [[ ${1-} == -d ]]; then
		COMPREPLY=($(compgen -d -- "$cur"))
	else
		COMPREPLY=($(compgen -f -- "$cur"))
	fi
}

_peertool()
{
	local cur prev words cword
	_peertool_init || return
	local tool=${words[0]}

	if ((cword == 1)); then
		COMPREPLY=($(compgen -W "$(_peertool_commands "$tool") help -help -version" -- "$cur"))
		return
	fi
	local cmd=${words[1]}
	if [[ $cmd == help ]]; then
		((cword == 2)) &&
			COMPREPLY=($(compgen -W "$(_peertool_commands "$tool")" -- "$cur"))
		return
	fi

	# --key=VALUE and --key VALUE: values that have names
	local opt=$prev val=$cur
	if [[ $cur == -*=* ]]; then
		opt=${cur%%=*}
		val=${cur#*=}
	fi
	case ${opt#-} in
	-chain | chain)
		COMPREPLY=($(compgen -W "main test testnet4 signet regtest" -- "$val"))
		return
		;;
	-bench-block | bench-block)
		COMPREPLY=($(compgen -W "ecdsa schnorr mixed" -- "$val"))
		return
		;;
	-prevouts | prevouts | -out | out | -spent-out | spent-out)
		_peertool_files
		return
		;;
	-utxo | utxo)
		_peertool_files -d
		return
		;;
	esac
	if [[ $cur == -* ]]; then
		local opts
		opts=$("$tool" help "$cmd" 2>/dev/null | grep -o -- '--[a-z][a-z0-9-]*' | grep -vx -- --key | sort -u)
		COMPREPLY=($(compgen -W "$opts --help" -- "$cur"))
		return
	fi
	_peertool_files
}
complete -F _peertool peertool
