# bash completion for peerctl (installed as
# $(PREFIX)/share/bash-completion/completions/peerctl). Options come from
# peerctl -help; methods from the running peerd's `help`, asked with the
# options already on the line (so -regtest -datadir=... find its socket),
# as bitcoin-cli's completion asks bitcoind.

_peerctl_methods()
{
	"$@" help 2>/dev/null | awk '/^==/ || /^$/ { next } { print $1 }'
}

# Without the bash-completion package: the words as bash splits them.
_peerctl_init()
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

_peerctl_files()
{
	if declare -F _filedir >/dev/null; then
		_filedir "$@"
	elif [[ ${1-} == -d ]]; then
		COMPREPLY=($(compgen -d -- "$cur"))
	else
		COMPREPLY=($(compgen -f -- "$cur"))
	fi
}

_peerctl()
{
	local cur prev words cword
	_peerctl_init || return
	local ctl=${words[0]}

	# the options before the method, and where the method is
	local i method=0
	local -a opts=()
	for ((i = 1; i < cword; i++)); do
		if [[ ${words[i]} == -* ]]; then
			opts+=("${words[i]}")
		else
			method=$i
			break
		fi
	done

	if [[ $cur == -* && $method == 0 ]]; then
		case $cur in
		-chain=*)
			COMPREPLY=($(compgen -W "main test testnet4 signet regtest" -- "${cur#*=}"))
			return
			;;
		-datadir=* | -conf=* | -controlsocket=*)
			cur=${cur#*=}
			_peerctl_files
			return
			;;
		esac
		local all
		all=$("$ctl" -help 2>/dev/null | grep -o -- '^  -[a-z0-9]*\(=\)\?\|, -[a-z0-9]*' |
			sed 's/^[ ,]*//')
		COMPREPLY=($(compgen -W "$all" -- "$cur"))
		[[ ${COMPREPLY-} == *= ]] && compopt -o nospace
		return
	fi
	if ((method == 0)) || { ((cword == method + 1)) && [[ ${words[method]} == help ]]; }; then
		COMPREPLY=($(compgen -W "$(_peerctl_methods "$ctl" "${opts[@]}")" -- "$cur"))
		return
	fi
}
complete -F _peerctl peerctl
