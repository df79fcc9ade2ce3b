package deps
import (
 _ "github.com/go-chi/chi/v5"
 _ "github.com/a-h/templ"
 _ "github.com/gorilla/websocket"
 _ "gopkg.in/yaml.v3"
 _ "modernc.org/sqlite"
 _ "mvdan.cc/sh/v3/syntax"
 _ "github.com/fsnotify/fsnotify"
 _ "github.com/gofrs/flock"
 _ "github.com/prometheus/client_golang/prometheus"
 _ "github.com/chromedp/chromedp"
 _ "github.com/PuerkitoBio/goquery"
 _ "github.com/getkin/kin-openapi/openapi3"
 _ "github.com/HdrHistogram/hdrhistogram-go"
)
