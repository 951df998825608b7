/* The bytes of the generated GraphiQL page (see graphiql_page.hpp). CUTOFF_GRAPHIQL_HTML is
   the page's path as a string literal, set by CMake, which also rebuilds this object whenever
   the page changes (the compiler's dependency output does not list .incbin files). */
#ifndef CUTOFF_GRAPHIQL_HTML
#error "CUTOFF_GRAPHIQL_HTML must name the generated graphiql.html"
#endif

  .section .rodata.cutoff_graphql_graphiql_html, "a"
  .balign 16
  .globl cutoff_graphql_graphiql_html
  .hidden cutoff_graphql_graphiql_html
  .type cutoff_graphql_graphiql_html, %object
cutoff_graphql_graphiql_html:
  .incbin CUTOFF_GRAPHIQL_HTML
  .globl cutoff_graphql_graphiql_html_end
  .hidden cutoff_graphql_graphiql_html_end
  .type cutoff_graphql_graphiql_html_end, %object
cutoff_graphql_graphiql_html_end:
  .byte 0  /* a terminating NUL, not part of the view */
  .size cutoff_graphql_graphiql_html, cutoff_graphql_graphiql_html_end - cutoff_graphql_graphiql_html
  .size cutoff_graphql_graphiql_html_end, 1

  /* No executable stack. */
  .section .note.GNU-stack, "", %progbits
