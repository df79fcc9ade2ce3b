// Command sidebyside compiles the shared policy at each size for toolgate,
// Cedar and OPA, checks every engine's decision on every call shape, times
// them in interleaved rounds and prints a markdown table of medians with
// the ratios toolgate/Cedar and toolgate/OPA.
//
//	go run ./cmd/sidebyside -sizes 10,1000,10000 -rounds 15
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/toolgate/toolgate/bench/peers"
)

func main() {
	sizes := flag.String("sizes", "10,1000,10000", "policy sizes in user rules, comma-separated")
	rounds := flag.Int("rounds", 15, "interleaved rounds; each cell reports the median")
	target := flag.Duration("target", 20*time.Millisecond, "time of one engine on one cell in one round")
	budget := flag.Duration("budget", 10*time.Minute, "no size after the first is started after this long; the table shows the sizes done")
	flag.Parse()
	start := time.Now()
	var cells []peers.Cell
	var compiles []string
	for _, f := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			log.Fatalf("bad size %q", f)
		}
		if len(cells) > 0 && time.Since(start) > *budget {
			fmt.Fprintf(os.Stderr, "budget of %s spent: size %d and later left out\n", *budget, n)
			break
		}
		c, err := peers.Compile(peers.Rules(n))
		if err != nil {
			log.Fatal(err)
		}
		if err := c.Check(peers.Shapes); err != nil {
			log.Fatalf("size %d: %v", n, err)
		}
		compiles = append(compiles, fmt.Sprintf("| %d | %.3f | %.3f | %.3f |", n, c.Compile[0], c.Compile[1], c.Compile[2]))
		fmt.Fprintf(os.Stderr, "size %d compiled (toolgate %.2fs, Cedar %.2fs, OPA %.2fs), timing...\n", n, c.Compile[0], c.Compile[1], c.Compile[2])
		cells = append(cells, peers.Measure(n, c, peers.Shapes, *rounds, *target)...)
	}
	peers.WriteTable(os.Stdout, cells)
	fmt.Println()
	fmt.Println("| rules | toolgate compile s | Cedar compile s | OPA prepare s |")
	fmt.Println("| ---: | ---: | ---: | ---: |")
	for _, l := range compiles {
		fmt.Println(l)
	}
}
