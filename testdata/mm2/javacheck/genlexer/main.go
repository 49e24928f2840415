// Command genlexer prints hex-encoded properties inputs, one per line, for
// PropsVectors.java: hand-picked edge cases, then seeded random ones.
//
//	go run ./testdata/mm2/javacheck/genlexer | java -cp "$KAFKA/libs/*:DIR" PropsVectors > testdata/mm2/lexer/java_vectors.jsonl
package main

import (
	"encoding/hex"
	"fmt"
	"math/rand"
)

var cases = []string{
	"a=b", "a = b ", "a:b", "a b", "a\tb", "a\fb", " a=b", "a==b", "a=:b", "a :b", "a  = \t b",
	"a\\=b=c", "a\\ b=c", "a\\:b c", "\\ a=b", "a=b\\", "a=b\\\n", "a=b\\\nc", "a=b\\\n   c", "a=b\\\r\n  c",
	"a=b\\\rc", "a=b\\\n\n c=d", "a=b\\\n# not comment", "\\\n#c\nx=y", "\\", "\\\n", "\\\n\n", "\\\\", "x=\\\\\\\n y",
	"# c\na=b", "! c\na=b", "  # c\na=b", "a=b # not a comment", "a=#b", "#\n!\n", "a", "a=", "=b", ":b", " =b",
	"a=\\u0041", "a=\\u00e9", "a=\\u00", "a=\\u004", "a=\\u004G", "\\u0041=b", "a=\\uD83D\\uDE00", "a=\\uD83D", "a=\\t\\n\\r\\f\\x\\b",
	"a=b\r\nc=d\re=f\n", "a=\xe9\xff", "\xef\xbb\xbfclusters=A", "a=b\nA=c", "a=1\na=2", "k\\\n  ey=v", "key\\\n=value",
	"a=b\\\\\n c=d", "a=b\\\\\\\n c", "\t\f a \f= b", "a\\\tb=c", "a=\\ b", "a=\\\n\\ b", "x:=y", "x=:=y", "x \\= y",
	"x=y\\u", "x\\u=y", "x=y\\u12", "a=b\\", "a=\\u0020x", "\r\n\r\n", "\n\n a\n", "a\\\r", "a\\\r\n", "a\\\r\r\nb",
}

func main() {
	for _, c := range cases {
		fmt.Println(hex.EncodeToString([]byte(c)))
	}
	alphabet := []byte("ab=: \t\f\\\n\r#!u0Fx\xe9")
	rng := rand.New(rand.NewSource(20240601))
	for i := 0; i < 3000; i++ {
		n := rng.Intn(24)
		b := make([]byte, n)
		for j := range b {
			b[j] = alphabet[rng.Intn(len(alphabet))]
		}
		fmt.Println(hex.EncodeToString(b))
	}
}
