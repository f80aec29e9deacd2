# doc/help2roff.awk: a binary's -help text as roff for its man page, so the
# OPTIONS section is always the binary's own list (make man fills the
# @OPTIONS@ line of doc/NAME.1.in with it).
#   "  -key=<value>"  an option: a tagged paragraph (a description may
#                     follow on the line after three spaces or more)
#   "      text"      its description (any deeper indent)
#   anything else     running text (indented lines kept as they are)
function esc(s) {
	gsub(/\\/, "\\e", s)
	gsub(/-/, "\\-", s)
	if (s ~ /^[.']/)
		s = "\\&" s
	return s
}
# -v tail=0: the page has its own EXAMPLES and EXIT STATUS, so the help's
# closing "Example:" and "Exit status" paragraphs are left out
tail == "0" && /^Example:/ { done = 1 }
done { next }
# the synopsis is the page's own
/^Usage:|^usage:/ { skip = 1; next }
skip && /^$/ { skip = 0; next }
skip { next }
# "  -key=<v>" alone, or "  -key=<v>   description" on one line
/^  -[^ ]/ {
	line = $0
	sub(/^  +/, "", line)
	tag = line
	desc = ""
	if (match(line, /   +/)) {
		tag = substr(line, 1, RSTART - 1)
		desc = substr(line, RSTART + RLENGTH)
	}
	print ".TP"
	print ".B " esc(tag)
	if (desc != "")
		print esc(desc)
	inopt = 1
	next
}
/^      / && inopt {
	sub(/^ +/, "")
	print esc($0)
	next
}
/^$/ { inopt = 0; print ".PP"; next }
/^  / {
	inopt = 0
	print ".nf"
	print esc($0)
	print ".fi"
	next
}
{ inopt = 0; print esc($0) }
